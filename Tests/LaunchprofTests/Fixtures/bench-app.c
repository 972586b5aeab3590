/*
 * The compare/bench fixture: an app whose didFinishLaunching does a fixed amount of CPU work
 * (a count of iterations, not a time: it is slowed by a busy machine as real work is), then
 * draws its first frame.
 *
 *   LP_BENCH_ITERATIONS        work of didFinishLaunching (default 4000000)
 *   LP_BENCH_SLEEP_US          blocking time in didFinishLaunching after the work (default 0):
 *                              wall time a busy machine barely stretches, for tests that must
 *                              hold under load
 *   LP_BENCH_SLOWDOWN_PERCENT  extra work and sleep in percent: 10 makes didFinishLaunching 10%
 *                              slower, 200 three times as slow
 *   LP_BENCH_TAG               names the truth line (`main <tag> <ns> <ns>`, written just before
 *                              the first frame when LP_FIXTURE_TRUTH is set): which launch ran when
 */
#include "run-fixture.h"
#include "launchprof.h"

#include <stdio.h>

/* xorshift steps: no memory traffic, nothing the compiler can fold away (the result is used). */
static uint64_t work(uint64_t iterations) {
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

int main(void) {
    uint64_t iterations = lp_setting("LP_BENCH_ITERATIONS", 4000000);
    const char *text = getenv("LP_BENCH_ITERATIONS");
    if (text != NULL) {
        /* lp_setting caps at 10^7; iterations may be larger. */
        iterations = strtoull(text, NULL, 10);
    }
    uint64_t slowdown = lp_setting("LP_BENCH_SLOWDOWN_PERCENT", 0);
    uint64_t sleep_us = lp_setting("LP_BENCH_SLEEP_US", 0);
    launchprof_begin("didFinishLaunching");
    uint64_t result = work(iterations + iterations / 100 * slowdown);
    lp_blocking_us(sleep_us + sleep_us * slowdown / 100);
    launchprof_end("didFinishLaunching");
    /* Before the first frame: launchprof may end the app as soon as it draws. */
    uint64_t now = lp_now();
    const char *tag = getenv("LP_BENCH_TAG");
    lp_truth("main", tag != NULL && *tag != '\0' ? tag : "-", now, now);
    launchprof_first_frame();
    /* Used, so the loop stays; /dev/null in the tests. */
    printf("%llu\n", (unsigned long long)(result & 1));
    return 0;
}
