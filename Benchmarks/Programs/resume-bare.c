/*
 * resume-bare: the baseline of the resume latency benchmark. Starts resume-target with
 * BARE_STOP=1 N times; each time waits until it has stopped itself at main, holds it stopped
 * for HOLD_US (as launchprof holds a prewarmed process: a CPU idle that long is slower to wake),
 * takes the clock, sends SIGCONT and reads the clock the target took once running: prints that
 * latency in ns, one line per launch.   usage: resume-bare TARGET N [HOLD_US (20000)]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: resume-bare TARGET N [HOLD_US]\n");
        return 64;
    }
    int runs = atoi(argv[2]);
    long hold_us = argc == 4 ? atol(argv[3]) : 20000;
    setenv("BARE_STOP", "1", 1);
    for (int i = 0; i < runs; i++) {
        int fds[2];
        if (pipe(fds) != 0) return 70;
        pid_t pid = fork();
        if (pid == 0) {
            dup2(fds[1], 1);
            close(fds[0]);
            execl(argv[1], argv[1], (char *)NULL);
            _exit(127);
        }
        close(fds[1]);
        int status = 0;
        waitpid(pid, &status, WUNTRACED);
        if (!WIFSTOPPED(status)) return 70;
        struct timespec hold = {hold_us / 1000000, (hold_us % 1000000) * 1000};
        nanosleep(&hold, NULL);
        uint64_t sent = now_ns();
        kill(pid, SIGCONT);
        char text[32] = {0};
        ssize_t count = read(fds[0], text, sizeof text - 1);
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (count <= 0) return 70;
        printf("%lld\n", (long long)(strtoull(text, NULL, 10) - sent));
    }
    return 0;
}
