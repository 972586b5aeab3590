/*
 * The sampler's fixture: heavy main-thread work in known functions and phases.
 *
 *   willFinishLaunching: wait_for_config() blocks in poll(2) for LP_SAMPLE_BLOCK_US (120 ms);
 *   didFinishLaunching:  compute_layout() computes for LP_SAMPLE_CPU_US of CPU time (150 ms),
 *                        tiny_step() for LP_SAMPLE_SMALL_US (5 ms), and, when LP_SAMPLE_PLUGIN
 *                        names a library, plugin_work() from it (dlopen'ed here) for
 *                        LP_SAMPLE_PLUGIN_US (60 ms).
 *   restoreState:        with LP_SAMPLE_SLEEP_US, restore_session() sleeps that long in
 *                        nanosleep(2) (a different system call from poll, named by the kernel's
 *                        clock_nanosleep).
 *   Then the first frame. LP_SAMPLE_QUICK=1: nothing but the first frame.
 *
 * Truth (LP_FIXTURE_TRUTH): one line per function, "<function> <thread-cpu-ns> <wall-ns>".
 */
#include "run-fixture.h"
#include "launchprof.h"

#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>

static uint64_t thread_cpu(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void truth(const char *function, uint64_t cpu, uint64_t wall) {
    const char *path = getenv("LP_FIXTURE_TRUTH");
    if (!path) return;
    char line[160];
    int length = snprintf(line, sizeof line, "%s %llu %llu\n", function, (unsigned long long)cpu,
                          (unsigned long long)wall);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        (void)!write(fd, line, (size_t)length);
        close(fd);
    }
}

volatile uint64_t sink;

/* Spins until `us` of this thread's CPU time have passed, inside its caller (inlined), so the
 * caller is the function computing. */
__attribute__((always_inline)) static inline void spin_cpu(uint64_t us) {
    uint64_t start = thread_cpu(), x = sink;
    while (thread_cpu() - start < us * 1000) {
        for (int i = 0; i < 50000; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    }
    sink = x;
}

__attribute__((noinline)) void compute_layout(void) {
    uint64_t cpu = thread_cpu(), wall = lp_now();
    spin_cpu(lp_setting("LP_SAMPLE_CPU_US", 150000));
    truth("compute_layout", thread_cpu() - cpu, lp_now() - wall);
}

__attribute__((noinline)) void tiny_step(void) {
    uint64_t cpu = thread_cpu(), wall = lp_now();
    spin_cpu(lp_setting("LP_SAMPLE_SMALL_US", 5000));
    truth("tiny_step", thread_cpu() - cpu, lp_now() - wall);
}

__attribute__((noinline)) void wait_for_config(void) {
    int fds[2];
    if (pipe(fds) != 0) return;
    struct pollfd entry = {.fd = fds[0], .events = POLLIN};
    uint64_t cpu = thread_cpu(), wall = lp_now();
    poll(&entry, 1, (int)(lp_setting("LP_SAMPLE_BLOCK_US", 120000) / 1000));
    truth("wait_for_config", thread_cpu() - cpu, lp_now() - wall);
    close(fds[0]);
    close(fds[1]);
}

__attribute__((noinline)) void restore_session(uint64_t us) {
    struct timespec pause = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    uint64_t cpu = thread_cpu(), wall = lp_now();
    while (nanosleep(&pause, &pause) != 0) {}
    truth("restore_session", thread_cpu() - cpu, lp_now() - wall);
}

__attribute__((noinline)) void load_plugin(const char *path) {
    void *library = dlopen(path, RTLD_NOW);
    if (!library) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(3);
    }
    void (*work)(uint64_t) = (void (*)(uint64_t))dlsym(library, "plugin_work");
    if (!work) exit(4);
    uint64_t cpu = thread_cpu(), wall = lp_now();
    work(lp_setting("LP_SAMPLE_PLUGIN_US", 60000));
    truth("plugin_work", thread_cpu() - cpu, lp_now() - wall);
}

int main(void) {
    if (!getenv("LP_SAMPLE_QUICK")) {
        launchprof_begin("willFinishLaunching");
        wait_for_config();
        launchprof_end("willFinishLaunching");
        uint64_t sleep_us = lp_setting("LP_SAMPLE_SLEEP_US", 0);
        if (sleep_us > 0) {
            launchprof_begin("restoreState");
            restore_session(sleep_us);
            launchprof_end("restoreState");
        }
        launchprof_begin("didFinishLaunching");
        compute_layout();
        tiny_step();
        const char *plugin = getenv("LP_SAMPLE_PLUGIN");
        if (plugin && *plugin) load_plugin(plugin);
        launchprof_end("didFinishLaunching");
    }
    launchprof_first_frame();
    return 0;
}
