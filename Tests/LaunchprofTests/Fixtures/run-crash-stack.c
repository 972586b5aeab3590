/*
 * Dies at the end of a call chain it knows, so that a test can check the crash stack frame by
 * frame: lp_crash_outer → lp_crash_middle → lp_crash_inner, which faults (SIGSEGV, the
 * default) or calls abort() (LP_CRASH=abort). With LP_CRASH_THREAD=1 the chain runs in a
 * thread the program's constructor starts and joins (lp_crash_thread: a thread other than main,
 * while launchprof still traces new threads), else from main. LP_CRASH=survive faults the same
 * way under a SIGSEGV handler that jumps back to main, which then exits 0: no crash.
 */
#include "run-fixture.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Work after each call keeps the calls from becoming jumps, so every function has a frame. */
volatile int lp_crash_after;

__attribute__((noinline)) void lp_crash_inner(void) {
    const char *how = getenv("LP_CRASH");
    if (how && strcmp(how, "abort") == 0) abort();
    volatile int *nowhere = (volatile int *)(uintptr_t)lp_setting("LP_NULL", 0);
    *nowhere = 1;
    lp_crash_after++;
}

__attribute__((noinline)) void lp_crash_middle(void) {
    lp_crash_inner();
    lp_crash_after++;
}

__attribute__((noinline)) void lp_crash_outer(void) {
    lp_crash_middle();
    lp_crash_after++;
}

__attribute__((noinline)) void *lp_crash_thread(void *unused) {
    (void)unused;
    lp_crash_outer();
    lp_crash_after++;
    return NULL;
}

__attribute__((constructor)) static void lp_crash_constructor(void) {
    if (lp_setting("LP_CRASH_THREAD", 0) != 1) return;
    pthread_t thread;
    if (pthread_create(&thread, NULL, lp_crash_thread, NULL) == 0) pthread_join(thread, NULL);
}

static sigjmp_buf lp_crash_survived;

static void lp_crash_handler(int signal) {
    (void)signal;
    siglongjmp(lp_crash_survived, 1);
}

int main(void) {
    const char *how = getenv("LP_CRASH");
    if (how && strcmp(how, "survive") == 0) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = lp_crash_handler;
        sigaction(SIGSEGV, &action, NULL);
        if (sigsetjmp(lp_crash_survived, 1) != 0) return 0;
    }
    lp_crash_outer();
    lp_crash_after++;
    return 0;
}
