// launchprof's X11 frame observer: a client of its own on the launched program's display that
// sees the program's top-level windows appear and their first content (server side, whatever
// the toolkit). Exported symbols are prefixed `lp_x11_`.
#pragma once

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

typedef struct lp_x11_observer lp_x11_observer;

enum lp_x11_event_kind {
    /// A top-level window of the program was mapped (shown, before it has content).
    LP_X11_WINDOW_MAPPED = 1,
    /// A mapped top-level window of the program first has content on the server: the program
    /// drew into it, or the server painted its background pixmap when it was shown.
    LP_X11_FIRST_FRAME = 2,
};

typedef struct {
    int32_t kind;
    /// The window's owner: X-Resource's client pid, else `_NET_WM_PID`.
    int32_t pid;
    uint32_t window;
    /// CLOCK_MONOTONIC when launchprof received the event.
    uint64_t at_ns;
    /// The launch the window belongs to: the launched pid, or what the owner filter named.
    int32_t root_pid;
} lp_x11_event;

enum lp_x11_open_status {
    LP_X11_OK = 0,
    /// Connecting failed (no server at that display, or not permitted).
    LP_X11_NO_DISPLAY = 1,
    /// The server lacks the DAMAGE extension.
    LP_X11_NO_DAMAGE = 2,
    /// Another client holds a conflicting selection on the root (never expected for
    /// SubstructureNotify, which any number of clients may select).
    LP_X11_SELECT_FAILED = 3,
};

/// Connects to `display` (NULL: `$DISPLAY`) and watches the roots for new windows. On success
/// `*observer` is set and `*has_xres` says whether X-Resource (1.2) names window owners (else
/// `_NET_WM_PID` does, when the toolkit sets it).
int lp_x11_open(const char *_Nullable display, lp_x11_observer *_Nullable *_Nonnull observer, int *has_xres);

/// The connection's descriptor, readable when events arrive.
int lp_x11_fd(lp_x11_observer *observer);

/// A new launch begins: forget the windows of the last one; the pid is not known yet (0). Until
/// the launch's first frame the screens' damage is watched too (drawing into a window before the
/// observer has reacted to its creation).
void lp_x11_begin_launch(lp_x11_observer *observer);

/// The launched process: windows of it or of any descendant are observed.
void lp_x11_set_root_pid(lp_x11_observer *observer, int32_t pid);

/// Field mode (`launchprof monitor`): a window is watched when `filter(context, owner)` names the
/// launch its owner belongs to (a pid > 0, the events' `root_pid`), instead of when its owner
/// descends from the launched pid. Called on the observer's thread, once per window.
typedef int32_t (*lp_x11_owner_filter)(void *_Nullable context, int32_t pid);
void lp_x11_set_owner_filter(lp_x11_observer *observer, lp_x11_owner_filter _Nullable filter, void *_Nullable context);

/// Field mode, once the owner filter is set: adopts the top-level windows that exist already
/// (made before this connection watched the display) and are not shown yet, when they belong to
/// a watched launch: their map and first content are then observed as any other's. A window
/// already shown is left alone (what it showed before went unseen). Returns how many were adopted.
int lp_x11_adopt_existing(lp_x11_observer *observer);

/// Handles every event that has arrived; writes up to `max` observations to `events` and returns
/// their count, or -1 when the connection is broken (the server went away).
int lp_x11_dispatch(lp_x11_observer *observer, lp_x11_event *events, int max);

void lp_x11_close(lp_x11_observer *observer);

#pragma clang assume_nonnull end
