// A constructor doing busy work before main: what prewarming moves ahead of the user's tap.
#define _GNU_SOURCE
#include "LaunchprofDemoSupport.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long worked_ns;

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

__attribute__((constructor)) static void lp_demo_init(void) {
    const char *text = getenv("LAUNCHPROF_DEMO_INIT_US");
    uint64_t us = 20000;
    if (text != NULL && *text != '\0') {
        us = 0;
        for (const char *p = text; *p >= '0' && *p <= '9' && us <= 10000000; p++) us = us * 10 + (uint64_t)(*p - '0');
    }
    uint64_t start = now_ns(), end = start + us * 1000;
    while (now_ns() < end) {
    }
    worked_ns = now_ns() - start;
}

unsigned long long lp_demo_init_ns(void) { return worked_ns; }
