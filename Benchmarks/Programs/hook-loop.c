/* Times the launch hooks in a loop and prints the cost per call:
 *     hook-loop CALLS [paced]   →   "calls=N ns_per_call=X.XXX"
 * With LAUNCHPROF_HOOK_FD naming launchprof's socket each call sends a line; without it each
 * call returns after one relaxed load. The first call (which reads the environment) is made
 * before the clock starts.
 *
 * "paced": calls come in batches of 8, and between batches, off the clock, the program waits
 * until the reader has taken every byte (SIOCOUTQ = 0). So every timed call finds an idle
 * reader, as in a real app that makes a few spread-out calls, rather than a busy one. */
#include "launchprof.h"

#include <linux/sockios.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void wait_for_reader(void) {
    const char *text = getenv("LAUNCHPROF_HOOK_FD");
    if (text == NULL) {
        return;
    }
    int fd = atoi(text);
    int pending = 0;
    for (long spins = 0; spins < 100000000L; spins++) {
        if (ioctl(fd, SIOCOUTQ, &pending) != 0 || pending == 0) {
            return;
        }
        sched_yield();
    }
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    int paced = argc > 2 && strcmp(argv[2], "paced") == 0;
    if (calls <= 0) {
        fprintf(stderr, "usage: hook-loop CALLS [paced] (CALLS a positive number)\n");
        return 64;
    }
    launchprof_begin("warm-up");
    const long batch = paced ? 8 : calls;
    unsigned long long elapsed = 0;
    long made = 0;
    while (made < calls) {
        if (paced) {
            wait_for_reader();
        }
        unsigned long long start = now_ns();
        for (long i = 0; i < batch; i += 2) {
            launchprof_begin("phase");
            launchprof_end("phase");
        }
        elapsed += now_ns() - start;
        made += (batch + 1) / 2 * 2;
    }
    printf("calls=%ld ns_per_call=%.3f\n", made, (double)elapsed / (double)made);
    return 0;
}
