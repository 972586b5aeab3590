/*
 * resume-target: a program whose first act in main is to read CLOCK_MONOTONIC, for the resume
 * latency benchmark (Benchmarks/prewarm.sh). Its constructor reads the clock once, so the read
 * after the resume is warm in both modes.
 *   BARE_STOP=1: stops itself first thing in main (SIGSTOP); once continued, prints its clock
 *                on stdout: the bare-SIGCONT baseline.
 *   otherwise, when prewarmed (ActivePrewarm=1) and RESUME_LOG names a file: appends
 *   "<main-ns> <first-frame-ns>" (the first frame is sent right away).
 */
#define _GNU_SOURCE
#define LAUNCHPROF_RECORD_STAMPS
#include "launchprof.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Binds clock_gettime (lazy binding) before the stop in both modes, so the first clock read
 * after the resume costs the same in both: what differs is only the wake-up. */
__attribute__((constructor)) static void bind_clock(void) { (void)now_ns(); }

int main(void) {
    const char *bare = getenv("BARE_STOP");
    if (bare != NULL && strcmp(bare, "1") == 0) {
        kill(getpid(), SIGSTOP);
        printf("%llu\n", (unsigned long long)now_ns());
        return 0;
    }
    uint64_t start = now_ns();
    launchprof_first_frame();
    const char *log = getenv("RESUME_LOG");
    const char *prewarm = getenv("ActivePrewarm");
    if (log != NULL && prewarm != NULL && strcmp(prewarm, "1") == 0) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            dprintf(fd, "%llu %llu\n", (unsigned long long)start, launchprof_last_stamp_ns);
            close(fd);
        }
    }
    return 0;
}
