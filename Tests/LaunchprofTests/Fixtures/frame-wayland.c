/*
 * A plain Wayland client: an xdg_toplevel whose first configure is acknowledged, then after
 * FRAME_DRAW_US of busy work (default 20000) a wl_shm buffer attached and committed: its first
 * frame. Truth (run-fixture.h): "main", and "first-frame wayland B E": B read just before the
 * attach and commit, E after wl_display_flush and a round trip (wl_display_roundtrip), so the
 * compositor has the commit by E.
 * Then it dispatches events until it is killed (FRAME_EXIT=1: it exits at once). Built with
 * xdg-shell's generated code.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <wayland-client.h>

#include "run-fixture.h"
#include "xdg-shell-client-protocol.h"

static struct wl_compositor *compositor;
static struct wl_shm *shm;
static struct xdg_wm_base *wm_base;
static int configured;

static void ping(void *data, struct xdg_wm_base *base, uint32_t serial) { xdg_wm_base_pong(base, serial); }
static const struct xdg_wm_base_listener wm_base_listener = {ping};

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    if (strcmp(interface, "wl_compositor") == 0) compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
    else if (strcmp(interface, "wl_shm") == 0) shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
    else if (strcmp(interface, "xdg_wm_base") == 0) {
        wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
        xdg_wm_base_add_listener(wm_base, &wm_base_listener, NULL);
    }
}
static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {}
static const struct wl_registry_listener registry_listener = {global, global_remove};

static void surface_configure(void *data, struct xdg_surface *surface, uint32_t serial) {
    xdg_surface_ack_configure(surface, serial);
    configured = 1;
}
static const struct xdg_surface_listener surface_listener = {surface_configure};

int main(void) {
    uint64_t started = lp_now();
    lp_truth("main", "main", started, started);
    struct wl_display *display = wl_display_connect(NULL);
    if (!display) {
        fprintf(stderr, "frame-wayland: cannot connect to $WAYLAND_DISPLAY\n");
        return 2;
    }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!compositor || !shm || !wm_base) {
        fprintf(stderr, "frame-wayland: the compositor lacks wl_compositor, wl_shm or xdg_wm_base\n");
        return 2;
    }
    struct wl_surface *surface = wl_compositor_create_surface(compositor);
    struct xdg_surface *xdg_surface = xdg_wm_base_get_xdg_surface(wm_base, surface);
    xdg_surface_add_listener(xdg_surface, &surface_listener, NULL);
    struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xdg_surface);
    xdg_toplevel_set_title(toplevel, "frame-wayland");
    wl_surface_commit(surface);  // the initial commit, without a buffer: asks for a configure
    while (!configured && wl_display_dispatch(display) >= 0) {
    }

    int width = 320, height = 240, stride = width * 4, size = stride * height;
    int fd = memfd_create("frame-wayland", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, size) != 0) return 2;
    uint32_t *pixels = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pixels == MAP_FAILED) return 2;
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, size);
    struct wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_XRGB8888);

    lp_busy_us(lp_setting("FRAME_DRAW_US", 20000));
    for (int i = 0; i < width * height; i++) pixels[i] = 0xff336699;
    uint64_t sending = lp_now();
    wl_surface_attach(surface, buffer, 0, 0);
    wl_surface_damage(surface, 0, 0, width, height);
    wl_surface_commit(surface);
    wl_display_flush(display);
    wl_display_roundtrip(display);
    uint64_t shown = lp_now();
    lp_truth("first-frame", "wayland", sending, shown);
    if (lp_setting("FRAME_EXIT", 0) > 0) return 0;
    while (wl_display_dispatch(display) >= 0) {
    }
    return 0;
}
