// Ctrl-C and friends: kill every child launchprof started, from the signal handler itself, so
// no traced, stopped or orphaned process outlives launchprof whatever the tracer is doing.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

enum { table_size = 256 };
static _Atomic pid_t children[table_size];
static _Atomic int interrupted_by;
static _Atomic uint64_t interrupted_at_ns;

void lp_track_child(pid_t pid) {
    for (int i = 0; i < table_size; i++) {
        pid_t expected = 0;
        if (atomic_compare_exchange_strong(&children[i], &expected, pid)) return;
    }
}

void lp_untrack_child(pid_t pid) {
    for (int i = 0; i < table_size; i++) {
        pid_t expected = pid;
        if (atomic_compare_exchange_strong(&children[i], &expected, 0)) return;
    }
}

void lp_kill_tracked_children(void) {
    for (int i = 0; i < table_size; i++) {
        pid_t pid = atomic_load(&children[i]);
        if (pid > 0) kill(pid, SIGKILL);
    }
}

static void on_interrupt(int signal) {
    int expected = 0;
    // clock_gettime is async-signal-safe: the time launchprof ended its children, after which
    // nothing they do is part of their launch.
    if (atomic_compare_exchange_strong(&interrupted_by, &expected, signal)) atomic_store(&interrupted_at_ns, lp_now_ns());
    lp_kill_tracked_children();
}

void lp_handle_ending_signals(void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler ? handler : SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
}

void lp_set_ending_signals_blocked(int blocked) {
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &ending, NULL);
}

void lp_install_interrupt_handler(void) {
    lp_handle_ending_signals(on_interrupt);
    // A parent may have started launchprof with these blocked (the mask is inherited; test
    // runners and process libraries do): Ctrl-C must still work. Threads created after this
    // inherit the unblocked mask.
    lp_set_ending_signals_blocked(0);
}

int lp_interrupted(void) { return atomic_load(&interrupted_by); }

uint64_t lp_interrupted_at_ns(void) { return atomic_load(&interrupted_at_ns); }
