// launchprof's Wayland frame observer: a relay between the launched program and its compositor
// that reads the protocol as it passes, to see the program's toplevel surfaces appear and their
// first buffer committed. Exported symbols are prefixed `lp_wl_`.
#pragma once

#include <stdint.h>

#pragma clang assume_nonnull begin

typedef struct lp_wl_relay lp_wl_relay;

enum lp_wl_event_kind {
    /// The first commit of a surface that became an xdg_toplevel (it asks to be configured).
    LP_WL_TOPLEVEL_COMMITTED = 1,
    /// The first commit of a toplevel surface with a buffer attached: its first frame.
    LP_WL_FIRST_FRAME = 2,
};

typedef struct {
    int32_t kind;
    /// The client process (SO_PEERCRED of its connection).
    int32_t pid;
    uint32_t surface;
    /// Which launch the client connected in (see lp_wl_relay_begin_launch).
    uint32_t launch;
    /// CLOCK_MONOTONIC when the relay received the request (it forwards it at once).
    uint64_t at_ns;
} lp_wl_event;

/// Listens on `listen_path` (a Unix socket it creates) and relays each client to the compositor
/// at `compositor_path`. Returns 0 or an errno value.
int lp_wl_relay_open(const char *listen_path, const char *compositor_path, lp_wl_relay *_Nullable *_Nonnull relay);

/// Clients that connect from now on belong to a new launch.
void lp_wl_relay_begin_launch(lp_wl_relay *relay);

/// Waits until a client, the compositor or `wake_fd` has something; relays it; writes up to
/// `max` observations. Returns their count, or -1 when `wake_fd` became readable.
int lp_wl_relay_step(lp_wl_relay *relay, int wake_fd, lp_wl_event *events, int max);

/// Closes every connection and removes the socket.
void lp_wl_relay_close(lp_wl_relay *relay);

#pragma clang assume_nonnull end
