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
    atomic_compare_exchange_strong(&interrupted_by, &expected, signal);
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

void lp_install_interrupt_handler(void) {
    lp_handle_ending_signals(on_interrupt);
    // A parent may have started launchprof with these blocked (the mask is inherited): Ctrl-C
    // must still work. Threads created after this inherit the unblocked mask.
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &handled, NULL);
}

int lp_interrupted(void) { return atomic_load(&interrupted_by); }
