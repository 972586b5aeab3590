/*
 * launchprof-demo: a small app whose launch shows every phase `launchprof run` measures.
 *
 *   program.init         a constructor doing busy work           LAUNCHPROF_DEMO_INIT_US    (2000)
 *   willFinishLaunching  busy work                               LAUNCHPROF_DEMO_WILL_US    (3000)
 *   restoreState         blocking work (reading "saved state")   LAUNCHPROF_DEMO_RESTORE_US (4000)
 *   didFinishLaunching   busy, then blocking work                LAUNCHPROF_DEMO_DID_US     (4000)
 *                        and, deliberately heavy, a search index LAUNCHPROF_DEMO_INDEX_US   (50000)
 *                        built on the main thread (CPU time):
 *                        `run --sample` flags build_search_index
 *                        → tokenize_titles
 *   firstFrame           after drawing (busy)                    LAUNCHPROF_DEMO_DRAW_US    (1000)
 *   extendedLaunch       two tasks on threads, started before    LAUNCHPROF_DEMO_TASK_US    (8000)
 *                        the first frame: "warm-cache" (the
 *                        given time) and "sync-inbox" (1.5x)
 *
 * Times are microseconds (0 skips a step's work); about 75 ms in all with the defaults. Without
 * launchprof the hooks do nothing and the demo still runs. Exits 0.
 */
#define _GNU_SOURCE
#include "launchprof.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Work amounts from the environment: digits only, capped at 10 s so a typo cannot hang a run. */
static uint64_t setting_us(const char *name, uint64_t fallback) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') {
        return fallback;
    }
    uint64_t value = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            return fallback;
        }
        value = value * 10 + (uint64_t)(*p - '0');
        if (value > 10000000) {
            return 10000000;
        }
    }
    return value;
}

/* CPU work: spin on the clock, as parsing or layout would. */
static void busy_us(uint64_t us) {
    uint64_t end = monotonic_ns() + us * 1000;
    volatile uint64_t sink = 0;
    while (monotonic_ns() < end) {
        sink++;
    }
}

/* Blocking work: sleep, as waiting on a disk or a socket would. */
static void blocking_us(uint64_t us) {
    struct timespec delay = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (nanosleep(&delay, &delay) != 0) {
    }
}

/* The launch's deliberately heavy step, for the sampler to find: LAUNCHPROF_DEMO_INDEX_US of this
 * thread's CPU time (so a busy machine stretches it but does not shrink the work), spent in the
 * clock reads under tokenize_titles; the work to move off the main thread (or past the first frame)
 * is build_search_index, what didFinishLaunching called. Neither call is a tail call, so each
 * function keeps its frame. */
static uint64_t thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

__attribute__((noinline)) static uint64_t tokenize_titles(uint64_t us) {
    uint64_t end = thread_cpu_ns() + us * 1000, tokens = 0;
    while (thread_cpu_ns() < end) {
        tokens++;
    }
    return tokens;
}

static volatile uint64_t search_index_size;

__attribute__((noinline)) static void build_search_index(uint64_t us) {
    search_index_size = tokenize_titles(us);
}

__attribute__((constructor)) static void demo_register_services(void) {
    busy_us(setting_us("LAUNCHPROF_DEMO_INIT_US", 2000));
}

struct task {
    const char *id;
    uint64_t us;
};

static void *run_task(void *argument) {
    const struct task *task = argument;
    blocking_us(task->us / 2);
    busy_us(task->us - task->us / 2);
    launchprof_finish_extended_launch(task->id);
    return NULL;
}

int main(void) {
    uint64_t task_us = setting_us("LAUNCHPROF_DEMO_TASK_US", 8000);
    uint64_t did_us = setting_us("LAUNCHPROF_DEMO_DID_US", 4000);

    launchprof_begin("willFinishLaunching");
    busy_us(setting_us("LAUNCHPROF_DEMO_WILL_US", 3000));
    launchprof_end("willFinishLaunching");

    launchprof_begin("restoreState");
    blocking_us(setting_us("LAUNCHPROF_DEMO_RESTORE_US", 4000));
    launchprof_end("restoreState");

    launchprof_begin("didFinishLaunching");
    struct task tasks[2] = {{"warm-cache", task_us}, {"sync-inbox", task_us + task_us / 2}};
    pthread_t threads[2];
    int started[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        launchprof_extend_launch(tasks[i].id);
        started[i] = pthread_create(&threads[i], NULL, run_task, &tasks[i]) == 0;
        if (!started[i]) {
            run_task(&tasks[i]);
        }
    }
    busy_us(did_us / 2);
    blocking_us(did_us - did_us / 2);
    build_search_index(setting_us("LAUNCHPROF_DEMO_INDEX_US", 50000));
    launchprof_end("didFinishLaunching");

    busy_us(setting_us("LAUNCHPROF_DEMO_DRAW_US", 1000));
    launchprof_first_frame();

    for (int i = 0; i < 2; i++) {
        if (started[i]) {
            pthread_join(threads[i], NULL);
        }
    }
    return 0;
}
