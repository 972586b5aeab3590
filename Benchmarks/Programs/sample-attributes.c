/*
 * What each part of the sampler's perf_event request costs the sampled thread: a child runs
 * sample-depth's work (LP_ITERATIONS multiply-adds under 28 frames) while this process samples
 * it at 4 kHz of task clock with one configuration, drains the ring like launchprof, and prints
 *   CONFIGURATION CHILD_THREAD_CPU_NS SAMPLE_RECORDS ALL_RECORDS WAKEUPS
 * The kernel charges its sampling work to the sampled thread, so its CPU time over a run without
 * events, divided by the samples, is the capture cost of one sample.
 *
 * Configurations: none (no events), no-payload (a bare timer sample), perf-dwarf (what
 * `perf record --call-graph dwarf,8192` asks: IP TID TIME PERIOD, the kernel call chain, 20
 * registers, 8 KiB of stack, comm/mmap/task records, a 512 KiB ring), launchprof (sampling.c's
 * request), and launchprof without one part: -no-switch-stacks (no context-switch event),
 * -no-switch-records (neither that event nor PERF_RECORD_SWITCH), -perf-clock (perf's default
 * clock instead of CLOCK_MONOTONIC), -no-mmap (no mapping records).
 *
 * Usage: sample-attributes CONFIGURATION [ITERATIONS]   (root or perf_event_paranoid <= 1)
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long thread_cpu(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

volatile uint64_t sink;

__attribute__((noinline)) uint64_t descend(int depth, uint64_t iterations) {
    if (depth > 0) return descend(depth - 1, iterations) + 1; /* not a tail call */
    uint64_t x = sink;
    for (uint64_t i = 0; i < iterations; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

static int open_event(struct perf_event_attr *attr, pid_t pid) {
    return (int)syscall(SYS_perf_event_open, attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static long samples, records;

static void drain(void *ring, size_t data_bytes) {
    struct perf_event_mmap_page *page = ring;
    const uint8_t *data = (const uint8_t *)ring + 4096;
    uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE), tail = page->data_tail;
    while (tail < head) {
        struct perf_event_header header;
        for (size_t i = 0; i < sizeof header; i++) ((uint8_t *)&header)[i] = data[(tail + i) & (data_bytes - 1)];
        if (header.size == 0) break;
        if (header.type == PERF_RECORD_SAMPLE) samples++;
        records++;
        tail += header.size;
    }
    __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sample-attributes CONFIGURATION [ITERATIONS]\n");
        return 64;
    }
    const char *name = argv[1];
    uint64_t iterations = argc > 2 ? strtoull(argv[2], 0, 10) : 100000000u;
    int go[2], done[2];
    if (pipe(go) || pipe(done)) return 71;
    pid_t pid = fork();
    if (pid == 0) {
        /* Only the parent's ends stay open: if it fails before starting us, read sees EOF. */
        close(go[1]);
        close(done[0]);
        char byte;
        if (read(go[0], &byte, 1) != 1) _exit(1);
        unsigned long long cpu = thread_cpu();
        sink = descend(28, iterations);
        cpu = thread_cpu() - cpu;
        if (write(done[1], &cpu, sizeof cpu) != sizeof cpu) _exit(1);
        _exit(0);
    }
    int launchprof = strncmp(name, "launchprof", 10) == 0;
    int perf = strcmp(name, "perf-dwarf") == 0;
    int fds[2] = {-1, -1};
    void *ring = NULL;
    size_t pages = perf ? 128 : 64;
    if (strcmp(name, "none") != 0) {
        struct perf_event_attr clock;
        memset(&clock, 0, sizeof clock);
        clock.size = sizeof clock;
        clock.type = PERF_TYPE_SOFTWARE;
        clock.config = PERF_COUNT_SW_TASK_CLOCK;
        clock.sample_period = 250000;
        clock.exclude_hv = 1;
        clock.sample_id_all = 1;
        clock.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
        if (perf) {
            clock.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            clock.exclude_callchain_user = 1;
            /* PERF_REGS_MASK: AX … R15 with FLAGS CS SS, without DS ES FS GS. */
            clock.sample_regs_user = ((1ULL << 24) - 1) & ~(0xfULL << 12);
            clock.sample_stack_user = 8192;
            clock.comm = clock.mmap = clock.mmap2 = clock.task = 1;
        } else if (launchprof) {
            clock.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME
                | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            clock.sample_regs_user = 0x1ffULL | (0xffULL << 16);
            clock.sample_stack_user = 8192;
            if (!strstr(name, "-perf-clock")) {
                clock.use_clockid = 1;
                clock.clockid = CLOCK_MONOTONIC;
            }
            clock.context_switch = !strstr(name, "-no-switch-records");
            clock.mmap = clock.mmap2 = !strstr(name, "-no-mmap");
            clock.watermark = 1;
            clock.wakeup_watermark = (uint32_t)(pages * 4096 / 2);
        }
        fds[0] = open_event(&clock, pid);
        if (fds[0] < 0) { perror("perf_event_open"); return 71; }
        if (launchprof && !strstr(name, "-no-switch")) {
            struct perf_event_attr switches = clock;
            switches.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
            switches.sample_period = 1;
            switches.context_switch = switches.mmap = switches.mmap2 = 0;
            switches.watermark = 0;
            switches.wakeup_watermark = 0;
            switches.sample_type |= PERF_SAMPLE_CALLCHAIN;
            switches.exclude_callchain_user = 1;
            switches.sample_max_stack = 48;
            fds[1] = open_event(&switches, pid);
            if (fds[1] < 0) { perror("perf_event_open"); return 71; }
        }
        ring = mmap(NULL, (pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
        if (ring == MAP_FAILED) { perror("mmap"); return 71; }
        if (fds[1] >= 0 && ioctl(fds[1], PERF_EVENT_IOC_SET_OUTPUT, fds[0])) { perror("SET_OUTPUT"); return 71; }
    }
    if (write(go[1], "g", 1) != 1) return 71;
    long wakeups = 0;
    for (;;) {
        struct pollfd wait[2] = {{.fd = done[0], .events = POLLIN}, {.fd = fds[0], .events = POLLIN}};
        if (poll(wait, ring ? 2 : 1, 200) < 0) continue;
        if (wait[1].revents & POLLIN) wakeups++;
        if (ring) drain(ring, pages * 4096);
        if (wait[0].revents & POLLIN) break;
    }
    unsigned long long cpu = 0;
    if (read(done[0], &cpu, sizeof cpu) != sizeof cpu) return 71;
    waitpid(pid, NULL, 0);
    if (ring) drain(ring, pages * 4096);
    printf("%s %llu %ld %ld %ld\n", name, cpu, samples, records, wakeups);
    return 0;
}
