/*
 * Ignores SIGTERM (and SIGINT), never becomes ready, and blocks for LP_SLEEP_US (default 30 s,
 * bounded) before exiting 0: only SIGKILL ends it early. It sends itself a SIGTERM first, so a
 * run that gets past that has shown the signal is ignored.
 * Truth: "main - t t" once SIGTERM is ignored.
 */
#include "run-fixture.h"

#include <signal.h>

int main(void) {
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    raise(SIGTERM);
    uint64_t now = lp_now();
    lp_truth("main", "-", now, now);
    uint64_t end = lp_now() + lp_setting("LP_SLEEP_US", 30000000) * 1000;
    while (lp_now() < end) {
        lp_blocking_us(100000);
    }
    return 0;
}
