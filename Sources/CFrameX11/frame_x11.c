// The X11 frame observer (see CFrameX11.h). Every event is stamped with CLOCK_MONOTONIC when
// launchprof takes it off the connection: the X server's own timestamps are milliseconds of
// server time, not comparable with the launch's clock.
#define _GNU_SOURCE
#include "CFrameX11.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xcb/damage.h>
#include <xcb/res.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// A rectangle the server painted into a window before launchprof's fence (window coordinates,
// the border at -border): possibly the background it paints itself when the window is shown.
typedef struct {
    int16_t x, y;
    uint16_t width, height;
} painted_rect;

// A rectangle read back whole up to SAMPLE_WHOLE pixels; larger, along two rows and two columns
// (at a third and two thirds): each read delays the program's next requests a little.
enum { MAX_ROOTS = 8, SAMPLE_WHOLE = 4096, SAMPLES_PER_WINDOW = 16 };

typedef struct {
    xcb_generic_event_t *event;
    uint64_t at;  // when launchprof had it (CLOCK_MONOTONIC)
} held_event;

typedef struct {
    xcb_window_t id;
    xcb_window_t root;
    xcb_damage_damage_t damage;
    // The sequence of launchprof's DamageCreate for it: damage the server reported before that
    // request reaches launchprof through the root's damage object instead.
    unsigned int watched;
    int32_t pid;  // 0: not known yet (no X-Resource; `_NET_WM_PID` is read at the map)
    int32_t launch;  // the launch it belongs to (see owning_launch), 0 until verified
    int verified;  // pid checked against the launched process (else checked at the map)
    uint16_t border;
    int mapped;
    uint64_t mapped_at;  // windowMapped's time: no content is earlier
    // Mapped before its damage object existed: that object's first report (the whole window,
    // which DamageCreate reports on a viewable window) repeats what the root's object showed.
    int mapped_before_watch;
    int framed;
    // Where it is on the screen (learnt at the map): the root's damage is cut to it.
    int has_bounds;
    int16_t origin_x, origin_y;  // the inside's top left corner, root coordinates
    uint16_t width, height;
    // A request sent when the map (or a later map of any window, as a window manager's frame)
    // was seen: damage reported after the server processed it is the program's drawing. Damage
    // before it may be the server painting backgrounds and borders.
    unsigned int fence;
    // The border boxes of the window and its subwindows (window coordinates): the server reports
    // painting a border as its whole box, which the background inside then overlaps.
    painted_rect *borders;
    size_t border_count;
    // What the server painted before the fence: a report overlapping one of them draws over a
    // background (the program, unless its pixels are the background's colour).
    painted_rect *painted;
    size_t painted_count, painted_capacity;
    // Reports before the fence whose pixels decide (read back once nothing else is waiting): a
    // large background (a background pixmap, an image viewer's picture, is content; a colour is
    // not), and a report over something painted (the program drawing, or the server painting a
    // background again where a subwindow was unmapped).
    painted_rect candidates[SAMPLES_PER_WINDOW];
    uint64_t candidate_at[SAMPLES_PER_WINDOW];
    // Read with the pixels just around it (inside the window): drawing one colour over a
    // background of another is content, painting the background again is not.
    uint8_t candidate_ring[SAMPLES_PER_WINDOW];
    // A later report drew into it before it was read: its pixels no longer tell.
    uint8_t candidate_touched[SAMPLES_PER_WINDOW];
    int candidate_count;
    int samples_left;  // reports that may still be read back
} tracked_window;

typedef struct {
    xcb_window_t id;
    uint16_t width, height;
    uint8_t bytes_per_pixel;  // of the root's depth in ZPixmap; 0: not a whole number of bytes
    // Damage anywhere on this screen during a launch, until its first frame: drawing into a
    // window before launchprof has watched it (a program that maps and draws at once).
    xcb_damage_damage_t damage;
} watched_root;

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
    watched_root roots[MAX_ROOTS];
    int root_count;
    // Events taken off the connection while launchprof waited for a reply, stamped as they
    // arrived, handled before any newer one.
    held_event *held;
    size_t held_count, held_capacity, held_next;
};

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int before(unsigned int sequence, unsigned int other) { return (int32_t)(sequence - other) < 0; }

// Takes every event the connection has already read, stamped `at`, to be handled in order
// before newer ones: called before and during a round trip, which reads on and would leave them
// to be stamped after it. Returns 0 when there was no room for all of them (the rest stay queued).
static int hold_queued(lp_x11_observer *self, uint64_t at) {
    for (;;) {
        if (self->held_count == self->held_capacity) {
            size_t capacity = self->held_capacity ? self->held_capacity * 2 : 64;
            held_event *grown = realloc(self->held, capacity * sizeof *grown);
            if (!grown) return 0;
            self->held = grown;
            self->held_capacity = capacity;
        }
        xcb_generic_event_t *event = xcb_poll_for_queued_event(self->connection);
        if (!event) return 1;
        self->held[self->held_count++] = (held_event){event, at};
    }
}

// Whether a MapNotify of `window` waits among the held events.
static int held_map(lp_x11_observer *self, xcb_window_t window) {
    for (size_t i = self->held_next; i < self->held_count; i++) {
        xcb_generic_event_t *event = self->held[i].event;
        if ((event->response_type & 0x7f) == XCB_MAP_NOTIFY && ((xcb_map_notify_event_t *)event)->window == window) return 1;
    }
    return 0;
}

// The next event and when launchprof had it: the held ones first, then the connection's (`now`).
static xcb_generic_event_t *next_event(lp_x11_observer *self, uint64_t now, uint64_t *at) {
    if (self->held_next < self->held_count) {
        *at = self->held[self->held_next].at;
        return self->held[self->held_next++].event;
    }
    self->held_count = self->held_next = 0;
    *at = now;
    return xcb_poll_for_event(self->connection);
}

// Waits for the reply to request `sequence` like xcb's own reply functions, but holds the events
// that arrive meanwhile stamped as they arrive, so that no round trip delays an event's time.
// NULL: an error, or the connection broke.
static void *await_reply(lp_x11_observer *self, unsigned int sequence) {
    xcb_flush(self->connection);
    struct pollfd readable = {.fd = xcb_get_file_descriptor(self->connection), .events = POLLIN};
    for (;;) {
        void *reply = NULL;
        xcb_generic_error_t *error = NULL;
        int answered = xcb_poll_for_reply(self->connection, sequence, &reply, &error);
        hold_queued(self, monotonic_ns());
        if (answered) {
            free(error);
            return reply;
        }
        if (xcb_connection_has_error(self->connection)) return NULL;
        if (poll(&readable, 1, -1) < 0 && errno != EINTR) return NULL;
    }
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
    const xcb_setup_t *setup = xcb_get_setup(connection);
    for (xcb_screen_iterator_t it = xcb_setup_roots_iterator(setup); it.rem; xcb_screen_next(&it)) {
        if (self->root_count < MAX_ROOTS) {
            watched_root *root = &self->roots[self->root_count++];
            *root = (watched_root){.id = it.data->root, .width = it.data->width_in_pixels,
                                   .height = it.data->height_in_pixels};
            for (xcb_format_iterator_t format = xcb_setup_pixmap_formats_iterator(setup); format.rem;
                 xcb_format_next(&format)) {
                if (format.data->depth == it.data->root_depth && format.data->bits_per_pixel % 8 == 0) {
                    root->bytes_per_pixel = format.data->bits_per_pixel / 8;
                }
            }
        }
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

static void forget_root_damage(lp_x11_observer *self) {
    for (int i = 0; i < self->root_count; i++) {
        if (self->roots[i].damage) xcb_damage_destroy(self->connection, self->roots[i].damage);
        self->roots[i].damage = 0;
    }
}

static void release(lp_x11_observer *self, tracked_window *window) {
    if (window->damage) xcb_damage_destroy(self->connection, window->damage);
    free(window->painted);
    free(window->borders);
}

void lp_x11_begin_launch(lp_x11_observer *self) {
    for (size_t i = 0; i < self->count; i++) release(self, &self->windows[i]);
    self->count = 0;
    atomic_store(&self->root_pid, 0);
    // Every drawing on the screens from now until the launch's first frame: a window drawn
    // before launchprof's thread has reacted to its creation is still seen.
    forget_root_damage(self);
    for (int i = 0; i < self->root_count; i++) {
        self->roots[i].damage = xcb_generate_id(self->connection);
        xcb_damage_create(self->connection, self->roots[i].damage, self->roots[i].id,
                          XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES);
    }
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
    xcb_res_query_client_ids_reply_t *reply =
        await_reply(self, xcb_res_query_client_ids(self->connection, 1, &spec).sequence);
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
    xcb_get_property_reply_t *reply = await_reply(
        self, xcb_get_property(self->connection, 0, window, self->net_wm_pid, XCB_ATOM_CARDINAL, 0, 1).sequence);
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
    release(self, window);
    *window = self->windows[--self->count];
}

static void track(lp_x11_observer *self, xcb_window_t id, xcb_window_t root, uint16_t border, int32_t pid) {
    if (self->count == self->capacity) {
        size_t capacity = self->capacity ? self->capacity * 2 : 16;
        tracked_window *grown = realloc(self->windows, capacity * sizeof *grown);
        if (!grown) return;
        self->windows = grown;
        self->capacity = capacity;
    }
    tracked_window *window = &self->windows[self->count++];
    *window = (tracked_window){.id = id, .root = root, .pid = pid, .border = border, .samples_left = SAMPLES_PER_WINDOW};
    // The window's own StructureNotify: its map is seen even when a window manager has
    // reparented it into a frame (the root then sees only the frame's map).
    uint32_t mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY;
    xcb_change_window_attributes(self->connection, id, XCB_CW_EVENT_MASK, &mask);
    // Usually created before the map; when the program was quicker, the screen's damage object
    // saw what it drew until then. Every drawing is reported (not only the first, NonEmpty): the
    // server's own painting of the map must be told apart.
    window->damage = xcb_generate_id(self->connection);
    window->watched =
        xcb_damage_create(self->connection, window->damage, id, XCB_DAMAGE_REPORT_LEVEL_RAW_RECTANGLES).sequence;
}

static int emit(lp_x11_event *events, int *count, int max, int kind, tracked_window *window, uint64_t at) {
    if (*count >= max) return 0;
    events[(*count)++] =
        (lp_x11_event){.kind = kind, .pid = window->pid, .window = window->id, .at_ns = at, .root_pid = window->launch};
    return 1;
}

// The window's first content, seen at `at`: reported once, and its damage object (and, for the
// launch's first frame, the screens' damage objects) freed: nothing more is needed of it.
static void framed(lp_x11_observer *self, tracked_window *window, uint64_t at, lp_x11_event *events, int *count,
                   int max) {
    if (at < window->mapped_at) at = window->mapped_at;  // seen in one read with the map
    window->framed = 1;
    window->candidate_count = 0;
    emit(events, count, max, LP_X11_FIRST_FRAME, window, at);
    if (window->damage) xcb_damage_destroy(self->connection, window->damage);
    window->damage = 0;
    forget_root_damage(self);
    xcb_flush(self->connection);
}

static watched_root *root_of(lp_x11_observer *self, xcb_window_t id) {
    for (int i = 0; i < self->root_count; i++) {
        if (self->roots[i].id == id) return &self->roots[i];
    }
    return NULL;
}

static int same(painted_rect a, painted_rect b) {
    return a.x == b.x && a.y == b.y && a.width == b.width && a.height == b.height;
}

static int overlaps(painted_rect a, painted_rect b) {
    return a.x < b.x + (int)b.width && b.x < a.x + (int)a.width && a.y < b.y + (int)b.height &&
           b.y < a.y + (int)a.height;
}

// What a damage report on a shown window is (window coordinates, `sequence` the last request of
// launchprof's the server had processed when it drew it):
// - after the fence: the program's drawing (the server's own painting of the map is done);
// - exactly a border box of the window or a subwindow: the server painting a border (or
//   DamageCreate's report of a window already shown); exactly something painted before: a
//   background painted again (a program's drawing is never clipped to exactly that);
// - else its pixels decide (`sample`): over something painted before, content unless it and the
//   pixels around it are one colour (a subwindow unmapped shows its parent's background); a
//   background the server painted at the map, content when large and not one colour (a
//   background pixmap), never when small.
// Returns 1 when the report is the window's first content; 0 when it is not or not yet known.
static int is_content(tracked_window *window, painted_rect area, unsigned int sequence, uint16_t width,
                      uint16_t height, uint64_t at) {
    if (!before(sequence, window->fence)) return 1;
    for (int c = 0; c < window->candidate_count; c++) {
        if (overlaps(area, window->candidates[c])) window->candidate_touched[c] = 1;
    }
    int border = window->border;
    if (border > 0 && area.x == -border && area.y == -border && area.width == width + 2 * border &&
        area.height == height + 2 * border) {
        return 0;
    }
    for (size_t i = 0; i < window->border_count; i++) {
        if (same(area, window->borders[i])) return 0;
    }
    int over = 0;
    for (size_t i = 0; i < window->painted_count && !over; i++) {
        if (same(area, window->painted[i])) return 0;
        over = overlaps(area, window->painted[i]);
    }
    if (over) {
        // Past the reports that may be read back, drawing over a background is taken as content.
        if (window->samples_left <= window->candidate_count) return 1;
    } else {
        if (window->painted_count == window->painted_capacity) {
            size_t capacity = window->painted_capacity ? window->painted_capacity * 2 : 64;
            painted_rect *grown = realloc(window->painted, capacity * sizeof *grown);
            if (!grown) return 1;  // cannot tell paint from drawing any more: the earlier answer
            window->painted = grown;
            window->painted_capacity = capacity;
        }
        window->painted[window->painted_count++] = area;
        if ((uint64_t)area.width * area.height * 4 < (uint64_t)width * height) return 0;
        if (window->samples_left <= window->candidate_count) return 0;
    }
    window->candidates[window->candidate_count] = area;
    window->candidate_ring[window->candidate_count] = (uint8_t)over;
    window->candidate_touched[window->candidate_count] = 0;
    window->candidate_at[window->candidate_count++] = at;
    return 0;
}

// A report from a window's own damage object.
static void window_damaged(lp_x11_observer *self, tracked_window *window, xcb_damage_notify_event_t *damage,
                           unsigned int sequence, uint64_t at, lp_x11_event *events, int *count, int max) {
    if (!window->mapped || window->framed) return;
    xcb_rectangle_t area = damage->area, geometry = damage->geometry;
    int border = window->border;
    if (window->mapped_before_watch && sequence == window->watched && area.x == -border && area.y == -border &&
        area.width == geometry.width + 2 * border && area.height == geometry.height + 2 * border) {
        // DamageCreate's report of all of a window already shown: what is on it was drawn
        // before, and the root's damage object reported that drawing when it happened.
        return;
    }
    painted_rect rect = {area.x, area.y, area.width, area.height};
    if (is_content(window, rect, sequence, geometry.width, geometry.height, at)) {
        framed(self, window, at, events, count, max);
    }
}

// A report from a screen's damage object: drawing into a shown window before its own damage
// object existed, cut to the window's place on the screen.
static void root_damaged(lp_x11_observer *self, xcb_damage_notify_event_t *damage, unsigned int sequence,
                         uint64_t at, lp_x11_event *events, int *count, int max) {
    for (size_t i = 0; i < self->count; i++) {
        tracked_window *window = &self->windows[i];
        if (!window->mapped || window->framed || !window->has_bounds || window->root != damage->drawable) continue;
        if (!before(sequence, window->watched)) continue;  // its own object saw it
        int border = window->border;
        int left = window->origin_x - border, top = window->origin_y - border;
        int right = window->origin_x + window->width + border, bottom = window->origin_y + window->height + border;
        int x0 = damage->area.x > left ? damage->area.x : left;
        int y0 = damage->area.y > top ? damage->area.y : top;
        int x1 = damage->area.x + damage->area.width < right ? damage->area.x + damage->area.width : right;
        int y1 = damage->area.y + damage->area.height < bottom ? damage->area.y + damage->area.height : bottom;
        if (x0 >= x1 || y0 >= y1) continue;
        painted_rect rect = {(int16_t)(x0 - window->origin_x), (int16_t)(y0 - window->origin_y), (uint16_t)(x1 - x0),
                             (uint16_t)(y1 - y0)};
        if (is_content(window, rect, sequence, window->width, window->height, at)) {
            framed(self, window, at, events, count, max);
        }
    }
}

// Whether `event` reports drawing into `area` of `window` (its own object's report, or a
// screen's before that object existed).
static int touches(lp_x11_observer *self, tracked_window *window, painted_rect area, xcb_generic_event_t *event) {
    if ((event->response_type & 0x7f) != self->damage_event) return 0;
    xcb_damage_notify_event_t *damage = (xcb_damage_notify_event_t *)event;
    painted_rect drawn = {damage->area.x, damage->area.y, damage->area.width, damage->area.height};
    if (damage->drawable == window->root && window->has_bounds) {
        drawn.x = (int16_t)(drawn.x - window->origin_x);
        drawn.y = (int16_t)(drawn.y - window->origin_y);
    } else if (damage->drawable != window->id) {
        return 0;
    }
    return overlaps(drawn, area);
}

// Reads back a candidate's pixels from the screen (from the root window there; see SAMPLE_WHOLE):
// content when they are not all one colour. Drawing reported into the same
// place before the server read them leaves the answer open (that drawing is then judged itself).
// Returns 1 when the candidate is the window's first content.
static int sample(lp_x11_observer *self, tracked_window *window, painted_rect area, int ring) {
    window->samples_left--;
    watched_root *root = root_of(self, window->root);
    if (!root || root->bytes_per_pixel == 0 || !window->has_bounds) return 0;
    int left = area.x, top = area.y, right = area.x + area.width, bottom = area.y + area.height;
    if (ring) {
        left = left > 0 ? left - 1 : 0;
        top = top > 0 ? top - 1 : 0;
        right = right < window->width ? right + 1 : window->width;
        bottom = bottom < window->height ? bottom + 1 : window->height;
    }
    int x0 = window->origin_x + left, y0 = window->origin_y + top;
    int x1 = window->origin_x + right, y1 = window->origin_y + bottom;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > root->width) x1 = root->width;
    if (y1 > root->height) y1 = root->height;
    if (x0 >= x1 || y0 >= y1) return 0;
    int width = x1 - x0, height = y1 - y0;
    xcb_rectangle_t strips[4] = {{(int16_t)x0, (int16_t)y0, (uint16_t)width, (uint16_t)height}};
    int count = 1;
    if (width * height > SAMPLE_WHOLE) {
        count = 0;
        for (int third = 1; third <= 2; third++) {
            strips[count++] = (xcb_rectangle_t){(int16_t)x0, (int16_t)(y0 + height * third / 3), (uint16_t)width, 1};
            strips[count++] = (xcb_rectangle_t){(int16_t)(x0 + width * third / 3), (int16_t)y0, 1, (uint16_t)height};
        }
    }
    xcb_get_image_cookie_t cookies[4];
    for (int i = 0; i < count; i++) {
        cookies[i] = xcb_get_image(self->connection, XCB_IMAGE_FORMAT_Z_PIXMAP, root->id, strips[i].x, strips[i].y,
                                   strips[i].width, strips[i].height, UINT32_MAX);
    }
    int detail = 0, answered = 1;
    uint8_t first[8];
    size_t size = root->bytes_per_pixel > sizeof first ? sizeof first : root->bytes_per_pixel;
    for (int i = 0; i < count; i++) {
        xcb_get_image_reply_t *reply = await_reply(self, cookies[i].sequence);
        if (!reply) {
            answered = 0;
            continue;
        }
        const uint8_t *pixels = xcb_get_image_data(reply);
        size_t length = (size_t)xcb_get_image_data_length(reply), columns = strips[i].width, lines = strips[i].height;
        size_t stride = length / lines;  // each line is padded to 32 bits
        if (stride < columns * size) {
            answered = 0;
        } else {
            if (i == 0) memcpy(first, pixels, size);
            for (size_t y = 0; y < lines && !detail; y++) {
                for (size_t x = 0; x < columns && !detail; x++) detail = memcmp(pixels + y * stride + x * size, first, size) != 0;
            }
        }
        free(reply);
    }
    if (!answered || !detail) return 0;
    // Events that arrived while waiting were drawn before the pixels were read: if one drew into
    // this window, the pixels may show it rather than the background.
    if (!hold_queued(self, monotonic_ns())) return 0;
    unsigned int read_at = cookies[count - 1].sequence;
    for (size_t i = self->held_next; i < self->held_count; i++) {
        xcb_generic_event_t *event = self->held[i].event;
        if (before(event->full_sequence, read_at) && touches(self, window, area, event)) return 0;
    }
    return 1;
}

// Where a shown window is on its screen (a round trip): the root's damage is cut to it and its
// pixels read from there.
static void locate(lp_x11_observer *self, tracked_window *window) {
    xcb_get_geometry_cookie_t geometry_cookie = xcb_get_geometry(self->connection, window->id);
    xcb_translate_coordinates_cookie_t origin_cookie =
        xcb_translate_coordinates(self->connection, window->id, window->root, 0, 0);
    xcb_get_geometry_reply_t *geometry = await_reply(self, geometry_cookie.sequence);
    xcb_translate_coordinates_reply_t *origin = await_reply(self, origin_cookie.sequence);
    if (geometry && origin) {
        window->has_bounds = 1;
        window->width = geometry->width;
        window->height = geometry->height;
        window->border = geometry->border_width;
        window->origin_x = origin->dst_x;
        window->origin_y = origin->dst_y;
    }
    free(geometry);
    free(origin);
}

// The border boxes of the window's subwindows with a border, in the window's coordinates (a
// round trip per level of the tree, at most MAX_SUBWINDOWS of them): a program's drawing is
// clipped to a window's inside, so a report of exactly such a box is the server painting a border.
enum { MAX_SUBWINDOWS = 4096 };
typedef struct {
    xcb_window_t id;
    int16_t x, y;  // the inside's top left corner, in the top-level window's coordinates
} subwindow;

static void find_borders(lp_x11_observer *self, tracked_window *window) {
    subwindow *level = malloc(sizeof *level);
    if (!level) return;
    level[0] = (subwindow){window->id, 0, 0};
    size_t level_count = 1, seen = 0;
    while (level_count > 0 && seen < MAX_SUBWINDOWS) {
        xcb_query_tree_cookie_t *trees = malloc(level_count * sizeof *trees);
        if (!trees) break;
        for (size_t i = 0; i < level_count; i++) trees[i] = xcb_query_tree(self->connection, level[i].id);
        subwindow *next = NULL;
        size_t next_count = 0;
        xcb_get_geometry_cookie_t *geometries = NULL;
        for (size_t i = 0; i < level_count; i++) {
            xcb_query_tree_reply_t *tree = await_reply(self, trees[i].sequence);
            int children = tree ? xcb_query_tree_children_length(tree) : 0;
            if (children <= 0) {
                free(tree);
                continue;
            }
            xcb_window_t *ids = xcb_query_tree_children(tree);
            subwindow *grown = realloc(next, (next_count + (size_t)children) * sizeof *grown);
            xcb_get_geometry_cookie_t *more = realloc(geometries, (next_count + (size_t)children) * sizeof *more);
            if (grown) next = grown;
            if (more) geometries = more;
            for (int c = 0; grown && more && c < children && seen < MAX_SUBWINDOWS; c++, seen++) {
                next[next_count] = (subwindow){ids[c], level[i].x, level[i].y};  // the parent's, for now
                geometries[next_count++] = xcb_get_geometry(self->connection, ids[c]);
            }
            free(tree);
        }
        free(trees);
        size_t kept = 0;
        for (size_t i = 0; i < next_count; i++) {
            xcb_get_geometry_reply_t *geometry = await_reply(self, geometries[i].sequence);
            if (!geometry) continue;
            int border = geometry->border_width;
            int16_t x = (int16_t)(next[i].x + geometry->x), y = (int16_t)(next[i].y + geometry->y);
            if (border > 0) {
                painted_rect *grown = realloc(window->borders, (window->border_count + 1) * sizeof *grown);
                if (grown) {
                    window->borders = grown;
                    window->borders[window->border_count++] = (painted_rect){
                        x, y, (uint16_t)(geometry->width + 2 * border), (uint16_t)(geometry->height + 2 * border)};
                }
            }
            next[kept++] = (subwindow){next[i].id, (int16_t)(x + border), (int16_t)(y + border)};
            free(geometry);
        }
        free(geometries);
        free(level);
        level = next;
        level_count = kept;
    }
    free(level);
}

// A request whose processing marks the end of the server's painting for what was mapped so far.
static unsigned int send_fence(lp_x11_observer *self) {
    unsigned int fence = xcb_get_input_focus(self->connection).sequence;
    xcb_discard_reply(self->connection, fence);
    xcb_flush(self->connection);
    return fence;
}

// The earliest time among the held events that report painting inside `window` (its own
// damage object's, or a screen's where it is), or `latest`.
static uint64_t first_painted(lp_x11_observer *self, tracked_window *window, uint64_t latest) {
    int border = window->border;
    painted_rect whole = {(int16_t)-border, (int16_t)-border, (uint16_t)(window->width + 2 * border),
                          (uint16_t)(window->height + 2 * border)};
    for (size_t i = self->held_next; i < self->held_count; i++) {
        if (self->held[i].at < latest && touches(self, window, whole, self->held[i].event)) latest = self->held[i].at;
    }
    return latest;
}

// A tracked window was mapped (seen now; `map_sequence` the map's, or 0 when it was found
// already shown): its owner checked when it was not known at its creation, then windowMapped,
// its place on the screen, and a fence after which the server's own painting of the map is
// over. A window of another program is forgotten.
static void mapped(lp_x11_observer *self, tracked_window *window, unsigned int map_sequence, lp_x11_event *events,
                   int *count, int max, uint64_t *now) {
    if (!window->verified) {
        if (window->pid == 0) {
            hold_queued(self, *now);
            window->pid = net_wm_pid(self, window->id);
            *now = monotonic_ns();  // after a round trip: events read since are no earlier
        }
        window->launch = owning_launch(self, window->pid);
        if (window->launch == 0) {
            forget(self, window);
            return;
        }
    }
    window->mapped = 1;
    window->mapped_before_watch = map_sequence == 0 || before(map_sequence, window->watched);
    uint64_t shown_at = *now;
    hold_queued(self, *now);
    locate(self, window);
    find_borders(self, window);
    // Found shown (inside a window manager's frame) without its MapNotify: it was shown by its
    // first painting among the events that arrived meanwhile, if that came earlier.
    if (map_sequence == 0) shown_at = first_painted(self, window, shown_at);
    window->mapped_at = shown_at;
    emit(events, count, max, LP_X11_WINDOW_MAPPED, window, shown_at);
    *now = monotonic_ns();
    window->fence = send_fence(self);
}

// Another window was shown (a window manager's frame around the program's window, which shows
// the window only now): the server's painting for it ends at a new fence.
static void other_mapped(lp_x11_observer *self) {
    unsigned int fence = 0;
    int sent = 0;
    for (size_t i = 0; i < self->count; i++) {
        tracked_window *window = &self->windows[i];
        if (!window->mapped || window->framed) continue;
        if (!sent) {
            fence = send_fence(self);
            sent = 1;
        }
        window->fence = fence;
    }
}

int lp_x11_dispatch(lp_x11_observer *self, lp_x11_event *events, int max) {
    int count = 0;
    int32_t root = atomic_load(&self->root_pid);
    uint64_t now = monotonic_ns();
    for (;;) {
        xcb_generic_event_t *event;
        uint64_t at;
        while ((event = next_event(self, now, &at))) {
            uint8_t type = event->response_type & 0x7f;
            if (type == XCB_CREATE_NOTIFY && find(self, ((xcb_create_notify_event_t *)event)->window)) {
                // Adopted already by the scan at connect (made between the root's watch and it).
            } else if (type == XCB_CREATE_NOTIFY) {
                xcb_create_notify_event_t *create = (xcb_create_notify_event_t *)event;
                // Watched before asking who owns it (a round trip): meanwhile a window manager may
                // reparent the window into its frame and map it, and that map reaches only the
                // window itself. Its state, asked after the watch, says whether it came first.
                hold_queued(self, at);
                track(self, create->window, create->parent, create->border_width, 0);
                xcb_get_window_attributes_cookie_t state =
                    xcb_get_window_attributes(self->connection, create->window);
                int32_t pid = client_pid(self, create->window);
                xcb_get_window_attributes_reply_t *attributes = await_reply(self, state.sequence);
                int already_mapped = attributes && attributes->map_state != XCB_MAP_STATE_UNMAPPED;
                free(attributes);
                now = at = monotonic_ns();  // after the round trips: events read since are no earlier
                tracked_window *window = find(self, create->window);
                int known = self->filter != NULL || root > 0;
                int32_t owner = pid != 0 && known ? owning_launch(self, pid) : 0;
                if (!window) {
                    // track() found no room: nothing to watch.
                } else if (pid == 0 ? self->has_xres : (known && owner == 0)) {
                    forget(self, window);
                } else {
                    // Before the launched pid is known (a window made as the child is spawned),
                    // the window is kept and its owner checked at its map.
                    window->pid = pid;
                    window->launch = owner;
                    window->verified = owner != 0;
                    // Its map is handled where it is in the stream when the root reported it;
                    // else (mapped inside a window manager's frame) now.
                    if (already_mapped && !held_map(self, create->window)) mapped(self, window, 0, events, &count, max, &at);
                }
            } else if (type == XCB_MAP_NOTIFY) {
                xcb_map_notify_event_t *map = (xcb_map_notify_event_t *)event;
                tracked_window *window = find(self, map->window);
                if (window && !window->mapped) {
                    mapped(self, window, event->full_sequence, events, &count, max, &at);
                } else if (!window && root_of(self, map->event)) {
                    other_mapped(self);
                }
            } else if (type == self->damage_event) {
                xcb_damage_notify_event_t *damage = (xcb_damage_notify_event_t *)event;
                tracked_window *window = find(self, damage->drawable);
                if (window) {
                    window_damaged(self, window, damage, event->full_sequence, at, events, &count, max);
                } else if (root_of(self, damage->drawable)) {
                    root_damaged(self, damage, event->full_sequence, at, events, &count, max);
                }
            } else if (type == XCB_DESTROY_NOTIFY) {
                tracked_window *window = find(self, ((xcb_destroy_notify_event_t *)event)->window);
                if (window) {
                    window->damage = 0;  // freed with the window
                    forget(self, window);
                }
            }
            free(event);
            if (at > now) now = at;  // a round trip above: the events it read are no earlier
        }
        // Large backgrounds painted at a map are read back once nothing else is waiting: a
        // background pixmap is the window's content from the moment it was painted.
        int sampled = 0;
        for (size_t i = 0; i < self->count; i++) {
            tracked_window *window = &self->windows[i];
            for (int c = 0; c < window->candidate_count && !window->framed; c++) {
                if (window->candidate_touched[c]) continue;  // the later report is judged itself
                sampled = 1;
                if (sample(self, window, window->candidates[c], window->candidate_ring[c])) {
                    framed(self, window, window->candidate_at[c], events, &count, max);
                }
            }
            window->candidate_count = 0;
        }
        now = monotonic_ns();
        if (!sampled) break;
    }
    if (xcb_connection_has_error(self->connection)) return -1;
    return count;
}

int lp_x11_adopt_existing(lp_x11_observer *self) {
    int adopted = 0;
    for (int r = 0; r < self->root_count; r++) {
        // After the root's watch (lp_x11_open): a window made since is in this list, its
        // CreateNotify, or both.
        xcb_window_t root = self->roots[r].id;
        xcb_query_tree_reply_t *tree = await_reply(self, xcb_query_tree(self->connection, root).sequence);
        if (!tree) continue;
        xcb_window_t *children = xcb_query_tree_children(tree);
        int count = xcb_query_tree_children_length(tree);
        for (int i = 0; i < count; i++) {
            if (find(self, children[i])) continue;
            // Watched first (its map and damage from now on), then asked for its state: a window
            // unmapped at that answer has its map and every drawing still to come.
            track(self, children[i], root, 0, 0);
            if (!find(self, children[i])) break;  // no room
            xcb_get_geometry_cookie_t geometry = xcb_get_geometry(self->connection, children[i]);
            xcb_get_window_attributes_cookie_t state = xcb_get_window_attributes(self->connection, children[i]);
            int32_t pid = client_pid(self, children[i]);
            xcb_get_geometry_reply_t *shape = await_reply(self, geometry.sequence);
            xcb_get_window_attributes_reply_t *attributes = await_reply(self, state.sequence);
            int unmapped = attributes && attributes->map_state == XCB_MAP_STATE_UNMAPPED;
            int32_t owner = pid != 0 ? owning_launch(self, pid) : 0;
            tracked_window *window = find(self, children[i]);
            if (window && unmapped && shape && (pid == 0 ? !self->has_xres : owner != 0)) {
                // A watched launch's window not shown yet: observed as one made after the watch.
                window->border = shape->border_width;
                window->pid = pid;
                window->launch = owner;
                window->verified = owner != 0;
                adopted++;
            } else if (window) {
                // Another program's, gone, or already shown (its map and first drawing, if any,
                // went unseen: nothing of it is reported).
                forget(self, window);
            }
            free(shape);
            free(attributes);
        }
        free(tree);
    }
    xcb_flush(self->connection);
    return adopted;
}

void lp_x11_close(lp_x11_observer *self) {
    xcb_disconnect(self->connection);
    for (size_t i = 0; i < self->count; i++) {
        free(self->windows[i].painted);
        free(self->windows[i].borders);
    }
    for (size_t i = self->held_next; i < self->held_count; i++) free(self->held[i].event);
    free(self->held);
    free(self->windows);
    free(self);
}
