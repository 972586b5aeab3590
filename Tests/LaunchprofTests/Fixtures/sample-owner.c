/*
 * Flags name the work's owner: a small timer helper, now(), is shared by a heavy caller and a
 * light one in didFinishLaunching.
 *
 *   stamp_start()     calls now() once (light);
 *   parse_catalog()   calls crunch(), which calls now() until LP_SAMPLE_CPU_US of this thread's
 *                     CPU time have passed (150 ms): most of the time sits in now() and the
 *                     clock, a share in crunch's own loop.
 *
 * parse_catalog and crunch are exported (built with -rdynamic they stay in .dynsym when the
 * program is stripped); now() is static. Truth (LP_FIXTURE_TRUTH): "parse_catalog <thread-cpu-ns>
 * <wall-ns>".
 */
#include "run-fixture.h"
#include "launchprof.h"

#include <stdio.h>

static uint64_t thread_cpu(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The shared helper: this thread's CPU time in ns. */
__attribute__((noinline)) static uint64_t now(void) {
    return thread_cpu();
}

volatile uint64_t started;

__attribute__((noinline)) void stamp_start(void) {
    started = now();
}

__attribute__((noinline)) void crunch(uint64_t us) {
    uint64_t start = now();
    while (now() - start < us * 1000) {
        // A share of crunch's own between reads of the clock (a read is a system call, most of
        // the time): without it nearly every sample would find now() on the stack, and whether
        // one catches crunch between two calls would be luck.
        for (volatile unsigned spin = 0; spin < 100; spin++) {}
    }
}

/* What parse_catalog measured of itself, written out by main (so no file I/O runs inside it). */
static uint64_t spent_cpu, spent_wall;

__attribute__((noinline)) void parse_catalog(void) {
    uint64_t cpu = thread_cpu(), wall = lp_now();
    crunch(lp_setting("LP_SAMPLE_CPU_US", 150000));
    spent_cpu = thread_cpu() - cpu;
    spent_wall = lp_now() - wall;
}

static void write_truth(void) {
    const char *path = getenv("LP_FIXTURE_TRUTH");
    if (!path) return;
    FILE *file = fopen(path, "a");
    if (!file) return;
    fprintf(file, "parse_catalog %llu %llu\n", (unsigned long long)spent_cpu, (unsigned long long)spent_wall);
    fclose(file);
}

int main(void) {
    launchprof_begin("didFinishLaunching");
    stamp_start();
    parse_catalog();
    launchprof_end("didFinishLaunching");
    write_truth();
    launchprof_first_frame();
    return 0;
}
