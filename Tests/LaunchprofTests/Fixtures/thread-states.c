/*
 * Hooked phases of the main thread, each in one known scheduler state (issue 34):
 *   spin       busy on the clock for LP_STATE_US                      running
 *   nanosleep  one nanosleep of LP_STATE_US                           sleeping
 *   mutex      locks a mutex another thread holds for LP_STATE_US     lock
 *   coldRead   reads LP_COLD_FILE, evicted from the page cache first  disk I/O
 *   contended  busy for LP_STATE_US while a thread pinned to the      running and runnable
 *              same CPU is busy too
 * LP_STATE_US defaults to 40 ms; LP_COLD_FILE must be a clean file on a disk (not tmpfs); without
 * it there is no coldRead phase.
 *
 * Truth, one line per phase after the last one (no file I/O inside a phase):
 *     state <phase> <begin-ns> <end-ns> <cpu-ns> <run-delay-low-ns> <run-delay-high-ns>
 * the phase's own clocks: its span (the hooks' stamps, CLOCK_MONOTONIC), the main thread's CPU
 * time in it (CLOCK_THREAD_CPUTIME_ID) and the kernel's count of its time waiting on a run queue
 * (run_delay, /proc/thread-self/schedstat). The kernel adds a wait to run_delay when it ends, so a
 * wait ending between a stamp and the run_delay read beside it cannot be placed on either side:
 * the count is read before and after each stamp, and the truth is the range between the phase's
 * least and largest count (equal when no wait touched a stamp).
 */
#include "run-fixture.h"
#define LAUNCHPROF_RECORD_STAMPS
#include "launchprof.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define LP_HOOK_STAMP(call, fallback) \
    (launchprof_last_stamp_ns = 0, (call), launchprof_last_stamp_ns != 0 ? launchprof_last_stamp_ns : (fallback))

static uint64_t state_us;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int ready[2];
static atomic_int stop_spinning;

static uint64_t thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int schedstat = -1;

/* The second field of schedstat: ns this thread waited on a run queue (one pread, opened once). */
static uint64_t run_delay_ns(void) {
    char text[128];
    ssize_t length = pread(schedstat, text, sizeof text - 1, 0);
    if (length <= 0) {
        return 0;
    }
    text[length] = '\0';
    char *space = strchr(text, ' ');
    return space ? strtoull(space + 1, NULL, 10) : 0;
}

struct span {
    const char *name;
    uint64_t begin, end, cpu;
    /* run_delay before and after each stamp. */
    uint64_t delay_begin[2], delay_end[2];
};
static struct span spans[8];
static int span_count;
static struct span *current;

static void begin(const char *name) {
    current = &spans[span_count++];
    current->name = name;
    current->delay_begin[0] = run_delay_ns();
    current->cpu = thread_cpu_ns();
    current->begin = LP_HOOK_STAMP(launchprof_begin(name), lp_now());
    current->delay_begin[1] = run_delay_ns();
}

static void end(void) {
    current->delay_end[0] = run_delay_ns();
    current->end = LP_HOOK_STAMP(launchprof_end(current->name), lp_now());
    current->cpu = thread_cpu_ns() - current->cpu;
    current->delay_end[1] = run_delay_ns();
}

static void signal_ready(void) {
    char byte = 1;
    (void)!write(ready[1], &byte, 1);
}

static void wait_ready(void) {
    char byte;
    while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
}

static void *hold_mutex(void *unused) {
    (void)unused;
    pthread_mutex_lock(&held);
    signal_ready();
    lp_blocking_us(state_us);
    pthread_mutex_unlock(&held);
    return NULL;
}

static void *spin_beside(void *cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(*(int *)cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    signal_ready();
    while (!atomic_load(&stop_spinning)) {
    }
    return NULL;
}

static void cold_read(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    static char chunk[1 << 20];
    begin("coldRead");
    while (read(fd, chunk, sizeof chunk) > 0) {
    }
    end();
    close(fd);
}

int main(void) {
    state_us = lp_setting("LP_STATE_US", 40000);
    schedstat = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (pipe(ready) != 0) {
        return 1;
    }
    int truth = lp_truth_open();

    begin("spin");
    lp_busy_us(state_us);
    end();

    begin("nanosleep");
    lp_blocking_us(state_us);
    end();

    pthread_t holder;
    pthread_create(&holder, NULL, hold_mutex, NULL);
    wait_ready();
    begin("mutex");
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
    end();
    pthread_join(holder, NULL);

    const char *cold = getenv("LP_COLD_FILE");
    if (cold != NULL && *cold != '\0') {
        cold_read(cold);
    }

    int cpu = sched_getcpu();
    cpu_set_t saved, one;
    sched_getaffinity(0, sizeof saved, &saved);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    pthread_t spinner;
    pthread_create(&spinner, NULL, spin_beside, &cpu);
    wait_ready();
    begin("contended");
    lp_busy_us(state_us);
    end();
    atomic_store(&stop_spinning, 1);
    pthread_join(spinner, NULL);
    sched_setaffinity(0, sizeof saved, &saved);

    for (int index = 0; index < span_count; index++) {
        char line[256];
        struct span *span = &spans[index];
        int length = snprintf(
            line, sizeof line, "state %s %llu %llu %llu %llu %llu\n", span->name, (unsigned long long)span->begin,
            (unsigned long long)span->end, (unsigned long long)span->cpu,
            (unsigned long long)(span->delay_end[0] - span->delay_begin[1]),
            (unsigned long long)(span->delay_end[1] - span->delay_begin[0]));
        if (truth >= 0 && length > 0) {
            (void)!write(truth, line, (size_t)length);
        }
    }
    return 0;
}
