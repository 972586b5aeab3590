/*
 * The sampler benchmark's program: didFinishLaunching runs a fixed amount of work (not a fixed
 * time, so the sampler's cost shows as a longer phase) at the bottom of a call chain of
 * LP_DEPTH frames (default 28: ~30 with main and libc's start-up).
 * LP_ITERATIONS (default 200 million) multiply-adds. Prints the work's thread CPU time in ns
 * (the kernel's sampling work is charged to the sampled thread).
 */
#include "launchprof.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long thread_cpu(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (unsigned long long)now.tv_sec * 1000000000u + (unsigned long long)now.tv_nsec;
}

volatile uint64_t sink;

__attribute__((noinline)) uint64_t descend(int depth, uint64_t iterations) {
    if (depth > 0) return descend(depth - 1, iterations) + 1;  /* not a tail call */
    uint64_t x = sink;
    for (uint64_t i = 0; i < iterations; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

int main(void) {
    const char *depth = getenv("LP_DEPTH"), *iterations = getenv("LP_ITERATIONS");
    launchprof_begin("didFinishLaunching");
    unsigned long long cpu = thread_cpu();
    sink = descend(depth ? atoi(depth) : 28, iterations ? strtoull(iterations, 0, 10) : 200000000u);
    cpu = thread_cpu() - cpu;
    launchprof_end("didFinishLaunching");
    printf("%llu\n", cpu);
    fflush(stdout);
    launchprof_first_frame();
    return 0;
}
