/*
 * A plain xcb client: one top-level window (with a border and a background pixel, so the X
 * server paints both when it maps it), mapped, and after its first Expose and
 * FRAME_DRAW_US of busy work (default 20000) one filled rectangle: its first frame. Truth
 * (run-fixture.h): "main", and "first-frame x11 B E": B read just before the drawing request, E
 * after xcb_flush and a round trip (GetInputFocus's reply), so the server has drawn it by E. Then it waits for events until it
 * is killed. FRAME_WINDOWS=0 makes it a display client that never maps a window; FRAME_EXIT=1
 * makes it exit right after its first frame (the overhead benchmark compares readiness modes).
 *
 * Other ways to show the first content (each writes the same truth line around it):
 * - FRAME_BACKGROUND_PIXMAP=1: the window's background is a pixmap with a picture (two colours),
 *   as an image viewer's; nothing is drawn: the server paints the picture at the map. B before
 *   the map request, E when the first Expose (sent after the painting) has arrived.
 * - FRAME_GRAB=1: the window is created, mapped and drawn into (without waiting for Expose)
 *   inside a server grab, so no other client's request (launchprof's watch of the new window)
 *   runs before the drawing. B before the drawing request, E after the ungrab's round trip.
 * - FRAME_DRAW_ON_TERM=1: nothing is drawn until SIGTERM (launchprof ending the run); then the
 *   rectangle ("late-frame x11 B E"), and the fixture waits on until SIGKILL, so the drawing is
 *   seen while launchprof still watches the run.
 * - FRAME_HOLD=1 holds the window made but not mapped; FRAME_HOLD=2 holds it after its first
 *   frame, then hides, shows and draws it once more: each hold says "created" or "drawn" on
 *   stdout once the server has the window (a round trip) and waits for a byte on stdin
 *   ("redrawn" follows the second showing).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <xcb/xcb.h>

#include "run-fixture.h"

static volatile sig_atomic_t terminated;
static void on_term(int signal) {
    (void)signal;
    terminated = 1;
}

/* Draws the rectangle and waits for the server to have drawn it; writes `kind` as truth. */
static void draw(xcb_connection_t *connection, xcb_window_t window, xcb_gcontext_t gc, const char *kind) {
    uint64_t sending = lp_now();
    xcb_rectangle_t rectangle = {40, 40, 200, 120};
    xcb_poly_fill_rectangle(connection, window, gc, 1, &rectangle);
    xcb_flush(connection);
    free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), NULL));
    lp_truth(kind, "x11", sending, lp_now());
}

/* Makes sure the server has every request sent so far, says `what` on stdout and waits for a
 * byte on stdin. */
static void hold_until_told(xcb_connection_t *connection, const char *what) {
    free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), NULL));
    printf("%s\n", what);
    fflush(stdout);
    char byte;
    if (read(0, &byte, 1) != 1) exit(3);
}

int main(void) {
    uint64_t started = lp_now();
    lp_truth("main", "main", started, started);
    xcb_connection_t *connection = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(connection)) {
        fprintf(stderr, "frame-x11: cannot connect to $DISPLAY\n");
        return 2;
    }
    int grab = lp_setting("FRAME_GRAB", 0) > 0, pixmap = lp_setting("FRAME_BACKGROUND_PIXMAP", 0) > 0;
    int on_term_only = lp_setting("FRAME_DRAW_ON_TERM", 0) > 0;
    if (on_term_only) {
        struct sigaction action = {.sa_handler = on_term};  // no SA_RESTART: poll returns EINTR
        sigaction(SIGTERM, &action, NULL);
    }
    xcb_screen_t *screen = xcb_setup_roots_iterator(xcb_get_setup(connection)).data;
    if (grab) xcb_grab_server(connection);
    xcb_window_t window = xcb_generate_id(connection);
    xcb_gcontext_t gc = xcb_generate_id(connection);
    uint32_t foreground = screen->black_pixel;
    xcb_create_gc(connection, gc, screen->root, XCB_GC_FOREGROUND, &foreground);
    uint32_t background = screen->white_pixel;
    uint32_t mask = XCB_CW_BACK_PIXEL;
    if (pixmap) {
        // The picture: white with a black band across its middle.
        xcb_pixmap_t picture = xcb_generate_id(connection);
        xcb_create_pixmap(connection, screen->root_depth, picture, screen->root, 320, 240);
        xcb_gcontext_t paper = xcb_generate_id(connection);
        xcb_create_gc(connection, paper, picture, XCB_GC_FOREGROUND, &screen->white_pixel);
        xcb_rectangle_t whole = {0, 0, 320, 240}, band = {0, 100, 320, 40};
        xcb_poly_fill_rectangle(connection, picture, paper, 1, &whole);
        xcb_poly_fill_rectangle(connection, picture, gc, 1, &band);
        background = picture;
        mask = XCB_CW_BACK_PIXMAP;
    }
    uint32_t values[] = {background, screen->black_pixel, XCB_EVENT_MASK_EXPOSURE};
    xcb_create_window(connection, XCB_COPY_FROM_PARENT, window, screen->root, 10, 10, 320, 240, 1,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual,
                      mask | XCB_CW_BORDER_PIXEL | XCB_CW_EVENT_MASK, values);
    int drawn = 0;
    uint64_t hold = lp_setting("FRAME_HOLD", 0);
    if (hold == 1) hold_until_told(connection, "created");
    uint64_t mapping = lp_now();
    if (lp_setting("FRAME_WINDOWS", 1) > 0) xcb_map_window(connection, window);
    if (grab) {
        uint64_t sending = lp_now();
        xcb_rectangle_t rectangle = {40, 40, 200, 120};
        xcb_poly_fill_rectangle(connection, window, gc, 1, &rectangle);
        xcb_ungrab_server(connection);
        xcb_flush(connection);
        free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), NULL));
        lp_truth("first-frame", "x11", sending, lp_now());
        drawn = 1;
    }
    xcb_flush(connection);

    struct pollfd display = {.fd = xcb_get_file_descriptor(connection), .events = POLLIN};
    for (;;) {
        if (on_term_only && terminated == 1) {
            terminated = 2;
            draw(connection, window, gc, "late-frame");
        }
        xcb_generic_event_t *event = xcb_poll_for_event(connection);
        if (!event) {
            if (xcb_connection_has_error(connection)) break;
            if (poll(&display, 1, -1) < 0 && errno != EINTR) break;
            continue;
        }
        if ((event->response_type & 0x7f) == XCB_EXPOSE && !drawn && !on_term_only) {
            drawn = 1;
            if (pixmap) {
                lp_truth("first-frame", "x11", mapping, lp_now());
            } else {
                lp_busy_us(lp_setting("FRAME_DRAW_US", 20000));
                draw(connection, window, gc, "first-frame");
            }
            if (hold == 2) {
                hold_until_told(connection, "drawn");
                // Hidden and shown again, and drawn: a later showing, not a first one.
                xcb_unmap_window(connection, window);
                xcb_map_window(connection, window);
                xcb_rectangle_t again = {60, 60, 100, 60};
                xcb_poly_fill_rectangle(connection, window, gc, 1, &again);
                hold_until_told(connection, "redrawn");
            }
            if (lp_setting("FRAME_EXIT", 0) > 0) break;
        }
        free(event);
    }
    return 0;
}
