// The X11 frame observer (see CFrameX11.h). Every event is stamped with CLOCK_MONOTONIC when
// launchprof takes it off the connection: the X server's own timestamps are milliseconds of
// server time, not comparable with the launch's clock.
#define _GNU_SOURCE
#include "CFrameX11.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/damage.h>
#include <xcb/res.h>
#include <xcb/xcb.h>

typedef struct {
    xcb_window_t id;
    xcb_damage_damage_t damage;
    int32_t pid;  // 0: not known yet (no X-Resource; `_NET_WM_PID` is read at the map)
    int32_t root;  // the launch it belongs to (see owning_launch), 0 until verified
    int verified;  // pid checked against the launched process (else checked at the map)
    uint16_t border;
    int mapped;
    int framed;
    // A request sent when the map was seen: damage reported after the server processed it is
    // the program's drawing. Damage before it may be the server's own painting of the map.
    unsigned int fence;
    // How many damage reports since the map could still be that painting (border, background).
    int map_paint_left;
} tracked_window;

struct lp_x11_observer {
    xcb_connection_t *connection;
    int has_xres;
    uint8_t damage_event;
    xcb_atom_t net_wm_pid;
    _Atomic int32_t root_pid;
    lp_x11_owner_filter filter;
    void *filter_context;
    tracked_window *windows;
    size_t count, capacity;
};

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int lp_x11_open(const char *display, lp_x11_observer **observer, int *has_xres) {
    *observer = NULL;
    xcb_connection_t *connection = xcb_connect(display, NULL);
    if (xcb_connection_has_error(connection)) {
        xcb_disconnect(connection);
        return LP_X11_NO_DISPLAY;
    }
    const xcb_query_extension_reply_t *damage = xcb_get_extension_data(connection, &xcb_damage_id);
    if (!damage || !damage->present) {
        xcb_disconnect(connection);
        return LP_X11_NO_DAMAGE;
    }
    free(xcb_damage_query_version_reply(connection, xcb_damage_query_version(connection, 1, 1), NULL));

    lp_x11_observer *self = calloc(1, sizeof *self);
    if (!self) {
        xcb_disconnect(connection);
        return LP_X11_NO_DISPLAY;
    }
    self->connection = connection;
    self->damage_event = damage->first_event + XCB_DAMAGE_NOTIFY;
    const xcb_query_extension_reply_t *res = xcb_get_extension_data(connection, &xcb_res_id);
    if (res && res->present) {
        // QueryClientIds is X-Resource 1.2.
        xcb_res_query_version_reply_t *version =
            xcb_res_query_version_reply(connection, xcb_res_query_version(connection, 1, 2), NULL);
        self->has_xres = version && (version->server_major > 1 || version->server_minor >= 2);
        free(version);
    }
    xcb_intern_atom_reply_t *atom =
        xcb_intern_atom_reply(connection, xcb_intern_atom(connection, 0, 11, "_NET_WM_PID"), NULL);
    self->net_wm_pid = atom ? atom->atom : XCB_ATOM_NONE;
    free(atom);

    uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY;
    int failed = 0;
    for (xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(connection)); it.rem;
         xcb_screen_next(&it)) {
        xcb_generic_error_t *error = xcb_request_check(
            connection,
            xcb_change_window_attributes_checked(connection, it.data->root, XCB_CW_EVENT_MASK, &mask));
        if (error) failed = 1;
        free(error);
    }
    if (failed) {
        lp_x11_close(self);
        return LP_X11_SELECT_FAILED;
    }
    *has_xres = self->has_xres;
    *observer = self;
    return LP_X11_OK;
}

int lp_x11_fd(lp_x11_observer *self) { return xcb_get_file_descriptor(self->connection); }

void lp_x11_set_root_pid(lp_x11_observer *self, int32_t pid) { atomic_store(&self->root_pid, pid); }

void lp_x11_set_owner_filter(lp_x11_observer *self, lp_x11_owner_filter filter, void *context) {
    self->filter = filter;
    self->filter_context = context;
}

void lp_x11_begin_launch(lp_x11_observer *self) {
    for (size_t i = 0; i < self->count; i++) {
        if (self->windows[i].damage) xcb_damage_destroy(self->connection, self->windows[i].damage);
    }
    self->count = 0;
    atomic_store(&self->root_pid, 0);
    xcb_flush(self->connection);
}

// Whether `pid` is `root` or one of its descendants, by the parent links in /proc.
static int descends_from(int32_t pid, int32_t root) {
    for (int depth = 0; depth < 64 && pid > 1; depth++) {
        if (pid == root) return 1;
        char path[64], buffer[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *file = fopen(path, "re");
        if (!file) return 0;
        size_t length = fread(buffer, 1, sizeof buffer - 1, file);
        fclose(file);
        buffer[length] = 0;
        // The command name may hold spaces and parentheses: the state follows the last ')'.
        char *close = strrchr(buffer, ')');
        int parent = 0;
        if (!close || sscanf(close + 1, " %*c %d", &parent) != 1) return 0;
        pid = parent;
    }
    return 0;
}

// The launch a window of `pid` belongs to: with an owner filter, the launch it names; else the
// launched pid when `pid` descends from it. 0: none (or not known yet).
static int32_t owning_launch(lp_x11_observer *self, int32_t pid) {
    if (pid <= 0) return 0;
    if (self->filter) return self->filter(self->filter_context, pid);
    int32_t root = atomic_load(&self->root_pid);
    return root > 0 && descends_from(pid, root) ? root : 0;
}

static int32_t client_pid(lp_x11_observer *self, xcb_window_t window) {
    if (!self->has_xres) return 0;
    xcb_res_client_id_spec_t spec = {.client = window, .mask = XCB_RES_CLIENT_ID_MASK_LOCAL_CLIENT_PID};
    xcb_res_query_client_ids_reply_t *reply = xcb_res_query_client_ids_reply(
        self->connection, xcb_res_query_client_ids(self->connection, 1, &spec), NULL);
    if (!reply) return 0;
    int32_t pid = 0;
    for (xcb_res_client_id_value_iterator_t it = xcb_res_query_client_ids_ids_iterator(reply); it.rem;
         xcb_res_client_id_value_next(&it)) {
        if ((it.data->spec.mask & XCB_RES_CLIENT_ID_MASK_LOCAL_CLIENT_PID) && it.data->length == 4) {
            pid = (int32_t)*xcb_res_client_id_value_value(it.data);
        }
    }
    free(reply);
    return pid;
}

static int32_t net_wm_pid(lp_x11_observer *self, xcb_window_t window) {
    if (self->net_wm_pid == XCB_ATOM_NONE) return 0;
    xcb_get_property_reply_t *reply = xcb_get_property_reply(
        self->connection,
        xcb_get_property(self->connection, 0, window, self->net_wm_pid, XCB_ATOM_CARDINAL, 0, 1), NULL);
    int32_t pid = 0;
    if (reply && xcb_get_property_value_length(reply) == 4) pid = *(int32_t *)xcb_get_property_value(reply);
    free(reply);
    return pid;
}

static tracked_window *find(lp_x11_observer *self, xcb_window_t window) {
    for (size_t i = 0; i < self->count; i++) {
        if (self->windows[i].id == window) return &self->windows[i];
    }
    return NULL;
}

static void forget(lp_x11_observer *self, tracked_window *window) {
    if (window->damage) xcb_damage_destroy(self->connection, window->damage);
    *window = self->windows[--self->count];
}

static void track(lp_x11_observer *self, xcb_window_t id, uint16_t border, int32_t pid) {
    if (self->count == self->capacity) {
        size_t capacity = self->capacity ? self->capacity * 2 : 16;
        tracked_window *grown = realloc(self->windows, capacity * sizeof *grown);
        if (!grown) return;
        self->windows = grown;
        self->capacity = capacity;
    }
    tracked_window *window = &self->windows[self->count++];
    *window = (tracked_window){.id = id, .pid = pid, .border = border};
    // The window's own StructureNotify: its map is seen even when a window manager has
    // reparented it into a frame (the root then sees only the frame's map).
    uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY;
    xcb_change_window_attributes(self->connection, id, XCB_CW_EVENT_MASK, &mask);
    // Created before the map, so no drawing after the map can precede it. Every drawing is
    // reported (not only the first, NonEmpty): the map's own painting must be told apart.
    window->damage = xcb_generate_id(self->connection);
    xcb_damage_create(self->connection, window->damage, id, XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES);
}

// Whether a damage report may be the server painting the border and background of a window it
// has just mapped (done inside the map request, before the program hears of the map): the first
// reports after the map, before the fence, covering exactly the border or the whole window. A
// program's own first drawing is told apart unless it covers the whole window and the server
// ran it before the fence (launchprof's thread then reacted later than the program drew).
static int is_map_paint(tracked_window *window, xcb_damage_notify_event_t *damage, uint32_t sequence) {
    if (window->map_paint_left <= 0 || (int32_t)(sequence - window->fence) >= 0) return 0;
    xcb_rectangle_t area = damage->area, geometry = damage->geometry;
    int border = window->border;
    int whole = area.x == 0 && area.y == 0 && area.width == geometry.width && area.height == geometry.height;
    int frame = border > 0 && area.x == -border && area.y == -border &&
                area.width == geometry.width + 2 * border && area.height == geometry.height + 2 * border;
    if (!whole && !frame) {
        window->map_paint_left = 0;
        return 0;
    }
    // The border is painted before the background; the background is the last of it.
    window->map_paint_left = whole ? 0 : window->map_paint_left - 1;
    return 1;
}

static int emit(lp_x11_event *events, int *count, int max, int kind, tracked_window *window, uint64_t at) {
    if (*count >= max) return 0;
    events[(*count)++] =
        (lp_x11_event){.kind = kind, .pid = window->pid, .window = window->id, .at_ns = at, .root_pid = window->root};
    return 1;
}

// A tracked window was mapped (seen now): its owner checked when it was not known at its
// creation, then windowMapped, and a fence after which the server's own painting of the map is
// over. A window of another program is forgotten.
static void mapped(lp_x11_observer *self, tracked_window *window, lp_x11_event *events, int *count, int max,
                   uint64_t *now) {
    if (!window->verified) {
        if (window->pid == 0) {
            window->pid = net_wm_pid(self, window->id);
            *now = monotonic_ns();  // after a round trip: events read since are no earlier
        }
        window->root = owning_launch(self, window->pid);
        if (window->root == 0) {
            forget(self, window);
            return;
        }
    }
    window->mapped = 1;
    emit(events, count, max, LP_X11_WINDOW_MAPPED, window, *now);
    window->map_paint_left = 2;
    window->fence = xcb_get_input_focus(self->connection).sequence;
    xcb_discard_reply(self->connection, window->fence);
    xcb_flush(self->connection);
}

int lp_x11_dispatch(lp_x11_observer *self, lp_x11_event *events, int max) {
    int count = 0;
    int32_t root = atomic_load(&self->root_pid);
    uint64_t now = monotonic_ns();
    xcb_generic_event_t *event;
    while ((event = xcb_poll_for_event(self->connection))) {
        uint8_t type = event->response_type & 0x7f;
        if (type == XCB_CREATE_NOTIFY) {
            xcb_create_notify_event_t *create = (xcb_create_notify_event_t *)event;
            // Watched before asking who owns it (a round trip): meanwhile a window manager may
            // reparent the window into its frame and map it, and that map reaches only the
            // window itself. Its state, asked after the watch, says whether it came first.
            track(self, create->window, create->border_width, 0);
            xcb_get_window_attributes_cookie_t state = xcb_get_window_attributes(self->connection, create->window);
            int32_t pid = client_pid(self, create->window);
            xcb_get_window_attributes_reply_t *attributes =
                xcb_get_window_attributes_reply(self->connection, state, NULL);
            int already_mapped = attributes && attributes->map_state != XCB_MAP_STATE_UNMAPPED;
            free(attributes);
            now = monotonic_ns();  // after the round trips: events read since are no earlier
            tracked_window *window = find(self, create->window);
            int known = self->filter != NULL || root > 0;
            int32_t owner = pid != 0 && known ? owning_launch(self, pid) : 0;
            if (!window) {
                // track() found no room: nothing to watch.
            } else if (pid == 0 ? self->has_xres : (known && owner == 0)) {
                forget(self, window);
            } else {
                // Before the launched pid is known (a window made as the child is spawned), the
                // window is kept and its owner checked at its map.
                window->pid = pid;
                window->root = owner;
                window->verified = owner != 0;
                if (already_mapped) mapped(self, window, events, &count, max, &now);
            }
        } else if (type == XCB_MAP_NOTIFY) {
            xcb_map_notify_event_t *map = (xcb_map_notify_event_t *)event;
            tracked_window *window = find(self, map->window);
            if (window && !window->mapped) mapped(self, window, events, &count, max, &now);
        } else if (type == self->damage_event) {
            xcb_damage_notify_event_t *damage = (xcb_damage_notify_event_t *)event;
            tracked_window *window = find(self, damage->drawable);
            if (window && window->mapped && !window->framed) {
                if (is_map_paint(window, damage, event->full_sequence)) {
                    free(event);
                    continue;
                }
                window->framed = 1;
                emit(events, &count, max, LP_X11_FIRST_FRAME, window, now);
                xcb_damage_destroy(self->connection, window->damage);
                window->damage = 0;
                xcb_flush(self->connection);
            }
        } else if (type == XCB_DESTROY_NOTIFY) {
            tracked_window *window = find(self, ((xcb_destroy_notify_event_t *)event)->window);
            if (window) {
                window->damage = 0;  // freed with the window
                forget(self, window);
            }
        }
        free(event);
    }
    if (xcb_connection_has_error(self->connection)) return -1;
    return count;
}

void lp_x11_close(lp_x11_observer *self) {
    xcb_disconnect(self->connection);
    free(self->windows);
    free(self);
}
