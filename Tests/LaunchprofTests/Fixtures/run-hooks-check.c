/*
 * Calls every hook LP_HOOK_REPEAT times (default 1) with errno set to a sentinel, and exits 1 if
 * any call changed errno, else 0. A SIGPIPE or a blocked send would show as a signal or a hang.
 * Truth: "exit - t t" once all calls returned.
 */
#include "run-fixture.h"
#include "launchprof.h"

int main(void) {
    uint64_t repeat = lp_setting("LP_HOOK_REPEAT", 1);
    int changed = 0;
    for (uint64_t i = 0; i < repeat; i++) {
        errno = 4242;
        launchprof_begin("check");
        changed |= errno != 4242;
        errno = 4242;
        launchprof_end("check");
        changed |= errno != 4242;
        errno = 4242;
        launchprof_extend_launch("task");
        changed |= errno != 4242;
        errno = 4242;
        launchprof_finish_extended_launch("task");
        changed |= errno != 4242;
        errno = 4242;
        launchprof_first_frame();
        changed |= errno != 4242;
        errno = 4242;
        launchprof_begin(NULL);
        changed |= errno != 4242;
    }
    uint64_t now = lp_now();
    lp_truth("exit", "-", now, now);
    return changed ? 1 : 0;
}
