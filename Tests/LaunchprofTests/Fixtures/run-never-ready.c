/*
 * Runs but never becomes ready: no first-frame hook, nothing on stdout, no listening socket;
 * it blocks for LP_SLEEP_US (default 30 s, bounded) and then exits 0. SIGTERM ends it.
 * Truth: "main - t t".
 */
#include "run-fixture.h"
#include "launchprof.h"

int main(void) {
    uint64_t now = lp_now();
    lp_truth("main", "-", now, now);
    launchprof_begin("waiting");
    lp_blocking_us(lp_setting("LP_SLEEP_US", 30000000));
    launchprof_end("waiting");
    return 0;
}
