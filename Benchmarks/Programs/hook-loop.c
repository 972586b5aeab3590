/* Times the launch hooks in a loop and prints the cost per call:
 *     hook-loop CALLS   →   "calls=N ns_per_call=X.XXX"
 * With LAUNCHPROF_HOOK_FD naming a datagram socket each call sends a line; without it each
 * call returns after one relaxed load. The first call (which reads the environment) is made
 * before the clock starts. */
#include "launchprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    if (calls <= 0) {
        fprintf(stderr, "usage: hook-loop CALLS (a positive number)\n");
        return 64;
    }
    launchprof_begin("warm-up");
    unsigned long long start = now_ns();
    for (long i = 0; i < calls; i += 2) {
        launchprof_begin("phase");
        launchprof_end("phase");
    }
    unsigned long long elapsed = now_ns() - start;
    long made = (calls + 1) / 2 * 2;
    printf("calls=%ld ns_per_call=%.3f\n", made, (double)elapsed / (double)made);
    return 0;
}
