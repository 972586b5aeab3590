/* Where a ptrace stop's cost goes on this machine, measured from both sides.
 *
 *  1. A traced child executes int3 in a loop; the tracer waits and continues it. The child times
 *     each int3 (what the stop costs it: everything), the tracer times its own handling (wait
 *     returned → PTRACE_CONT issued: launchprof's `tracerPauseNs`); the rest is the kernel and
 *     the scheduler: delivering the trap, waking the tracer, waking the child again. Once with
 *     tracer and child on one CPU, once on two.
 *  2. sched_setaffinity on the stopped child (launchprof restores the child's mask at main).
 *  3. Exit → waitpid returning in the parent, for a traced and an untraced child (the reaping).
 *
 * Prints medians in ns. Needs 2 CPUs and ptrace. Build: cc -O2 -o stop-costs stop-costs.c */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static void pin(pid_t pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(pid, sizeof set, &set);
}
static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
static uint64_t median(uint64_t *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare);
    return v[n / 2];
}

enum { N = 400 };

static void stops(int child_cpu) {
    uint64_t *shared = mmap(NULL, sizeof(uint64_t) * N, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t pause[N];
    pin(0, 0);
    pid_t child = fork();
    if (child == 0) {
        pin(0, child_cpu);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        for (int i = 0; i < N; i++) {
            uint64_t before = now();
            __asm__ volatile("int3");
            shared[i] = now() - before;
        }
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    ptrace(PTRACE_CONT, child, 0, 0);
    for (int i = 0; i < N; i++) {
        waitpid(child, &status, 0);
        uint64_t woke = now();
        ptrace(PTRACE_CONT, child, 0, 0);
        pause[i] = now() - woke;
    }
    waitpid(child, &status, 0);
    uint64_t stop = median(shared, N), handled = median(pause, N);
    printf("ptrace stop, tracer CPU 0, child CPU %d: the child loses %llu ns per stop; the tracer handles it in %llu ns; "
           "kernel and scheduler (trap, wake tracer, wake child): %llu ns\n",
           child_cpu, (unsigned long long)stop, (unsigned long long)handled, (unsigned long long)(stop - handled));
    munmap(shared, sizeof(uint64_t) * N);
}

static void affinity(void) {
    uint64_t cost[N];
    pid_t child = fork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    for (int i = 0; i < N; i++) {
        uint64_t start = now();
        sched_setaffinity(child, sizeof all, &all);
        cost[i] = now() - start;
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    printf("sched_setaffinity on the stopped child (restoring its mask): %llu ns\n", (unsigned long long)median(cost, N));
}

static void reaping(int traced) {
    uint64_t *shared = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t latency[N / 4];
    for (int i = 0; i < N / 4; i++) {
        pid_t child = fork();
        if (child == 0) {
            if (traced) {
                ptrace(PTRACE_TRACEME, 0, 0, 0);
                raise(SIGSTOP);
            }
            *shared = now();
            _exit(0);
        }
        int status;
        if (traced) {
            waitpid(child, &status, 0);
            ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_EXITKILL);
            ptrace(PTRACE_CONT, child, 0, 0);
        }
        waitpid(child, &status, 0);
        latency[i] = now() - *shared;
    }
    printf("exit → waitpid returns, %s child: %llu ns\n", traced ? "traced" : "untraced",
           (unsigned long long)median(latency, N / 4));
    munmap(shared, sizeof(uint64_t));
}

int main(void) {
    stops(0);
    stops(1);
    affinity();
    pin(0, 0);
    reaping(0);
    reaping(1);
    return 0;
}
