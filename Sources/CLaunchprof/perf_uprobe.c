// Uprobe perf events: a breakpoint the kernel handles itself, with a timestamp written to a ring
// buffer, so the observed process is never stopped. perf_event_open has no glibc wrapper and the
// ring buffer is raw memory: both stay here (the holder that keeps tracefs probes is Swift,
// UprobeHolder.swift).
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// Opens a probe's event (a uprobe of the PMU or a tracefs uprobe event): every hit a sample with
// its time in CLOCK_MONOTONIC, written into `output_fd`'s ring when given; its fd and id out.
// `raw`: each sample also carries the event's payload (PERF_SAMPLE_RAW: a tracefs event's
// fetched arguments), after the time.
static int open_probe_event(struct perf_event_attr *attr, pid_t pid, int cpu, int output_fd, int raw, int *fd,
                            uint64_t *id) {
    attr->sample_period = 1;
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (raw) attr->sample_type |= PERF_SAMPLE_RAW;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;
    // A PERF_RECORD_LOST then carries the time its loss ended (the sample_id trailer).
    attr->sample_id_all = 1;
    // A ring's reader (the holder) is woken when a quarter of its 64 pages is written: a process
    // hitting a probe in a loop fills a ring in ~10 ms, faster than the reader's 20 ms timer.
    attr->watermark = 1;
    attr->wakeup_watermark = 16 * 4096;
    int result = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (result < 0) return errno;
    if (output_fd >= 0 && ioctl(result, PERF_EVENT_IOC_SET_OUTPUT, output_fd) < 0) {
        int error = errno;
        close(result);
        return error;
    }
    if (ioctl(result, PERF_EVENT_IOC_ID, id) < 0) {
        int error = errno;
        close(result);
        return error;
    }
    *fd = result;
    return 0;
}

int lp_uprobe_open(pid_t pid, int cpu, uint32_t pmu_type, const char *path, uint64_t offset,
                   int output_fd, int *fd, uint64_t *id) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = pmu_type;
    attr.config = 0;  // entry probe (bit 0 would make it a return probe)
    attr.config1 = (uint64_t)(uintptr_t)path;
    attr.config2 = offset;
    return open_probe_event(&attr, pid, cpu, output_fd, 0, fd, id);
}

int lp_perf_ring_map(int fd, int data_pages, void **base, size_t *length) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = page * (size_t)(1 + data_pages);
    void *mapped = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) return errno;
    *base = mapped;
    *length = size;
    return 0;
}

void lp_perf_ring_unmap(void *base, size_t length) { munmap(base, length); }

int lp_perf_ring_read(void *base, size_t length, lp_perf_sample *samples, int capacity,
                      int *count, uint64_t *lost) {
    return lp_perf_ring_read_raw(base, length, samples, capacity, count, lost, NULL, 0, NULL, NULL);
}

int lp_perf_ring_read_raw(void *base, size_t length, lp_perf_sample *samples, int capacity, int *count,
                          uint64_t *lost, uint8_t *raw, size_t raw_stride, uint32_t *raw_lengths,
                          lp_ring_reading *reading) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    lp_ring_reader ring = lp_ring_begin(base, page, length - page);
    const size_t header = sizeof(struct perf_event_header);
    int stored = 0;
    while (stored < capacity && lp_ring_next(&ring) == 1) {
        if (ring.type == PERF_RECORD_SAMPLE && ring.record_size >= header + 32) {
            uint8_t bytes[32];
            lp_ring_copy(&ring, header, bytes, 32);
            if (reading) {
                // A hit of the probe this ring's previous hit was of, by the same process, within
                // `repeat_ns` of it (a process hitting one probe in a loop: ~2 µs a hit) is not
                // handed out: the first of the run is the boundary. A hit with a payload (a
                // runtime probe's) always is. Read here, a flood costs the reader a few
                // nanoseconds a hit instead of a sample's trip through the caller.
                uint64_t id, time;
                uint32_t pid;
                memcpy(&id, bytes, 8);
                memcpy(&pid, bytes + 16, 4);
                memcpy(&time, bytes + 24, 8);
                int repeat = reading->last_id == id && reading->last_pid == pid && time >= reading->last_time_ns &&
                             time - reading->last_time_ns < reading->repeat_ns && ring.record_size == header + 32;
                reading->last_id = id;
                reading->last_pid = pid;
                reading->last_time_ns = time;
                if (repeat) {
                    reading->repeats++;
                    lp_ring_advance(&ring);
                    continue;
                }
            }
            lp_perf_sample *sample = &samples[stored++];
            memcpy(&sample->id, bytes, 8);
            memcpy(&sample->ip, bytes + 8, 8);
            memcpy(&sample->pid, bytes + 16, 4);
            memcpy(&sample->tid, bytes + 20, 4);
            memcpy(&sample->time_ns, bytes + 24, 8);
            if (raw) {
                // After the time: a u32 size, then the payload (the record padded to 8 bytes). A
                // sample of an event without PERF_SAMPLE_RAW ends at the time: no payload.
                uint32_t payload = 0;
                if (ring.record_size >= header + 36) lp_ring_copy(&ring, header + 32, &payload, 4);
                // One the record cannot hold is no payload; a longer one than `raw_stride` is cut.
                if (header + 36 + (size_t)payload > ring.record_size) payload = 0;
                if (payload > raw_stride) payload = (uint32_t)raw_stride;
                lp_ring_copy(&ring, header + 36, raw + (size_t)(stored - 1) * raw_stride, payload);
                raw_lengths[stored - 1] = payload;
            }
        } else if (ring.type == PERF_RECORD_LOST && ring.record_size >= header + 16) {
            uint64_t dropped;
            lp_ring_copy(&ring, header + 8, &dropped, 8);
            *lost += dropped;
            // After id and count, the trailer (sample_id_all): pid and tid, then the time the
            // loss ended. It began after this ring's previous record: the loss window.
            if (reading && ring.record_size >= header + 32) {
                uint64_t ended;
                lp_ring_copy(&ring, header + 24, &ended, 8);
                if (reading->windows < LP_RING_LOSS_WINDOWS) {
                    reading->loss_begin_ns[reading->windows] = reading->last_time_ns;
                    reading->loss_end_ns[reading->windows] = ended;
                    reading->loss_count[reading->windows] = dropped;
                    reading->windows++;
                } else {
                    // Out of room: the last window grows to cover this one.
                    reading->loss_end_ns[LP_RING_LOSS_WINDOWS - 1] = ended;
                    reading->loss_count[LP_RING_LOSS_WINDOWS - 1] += dropped;
                }
                reading->last_time_ns = ended;
                reading->last_id = 0;
            }
        }
        lp_ring_advance(&ring);
    }
    lp_ring_end(&ring);
    *count = stored;
    return 0;
}

void lp_perf_release_in_background(const int *fds, int count) {
    lp_perf_release_in_background_named(fds, count, "lp-uprobe-free");
}

void lp_perf_release_in_background_named(const int *fds, int count, const char *name) {
    // Releasing a uprobe or tracepoint event waits for RCU grace periods (~30-90 ms each here):
    // a short-lived grandchild holds the last references and pays that, so launchprof need not
    // wait. It must be the last holder: it closes them only once launchprof and the
    // intermediate child (which launchprof waits for) have dropped theirs — the gate's write
    // ends, closed after the events, tell it so (else that child's exit paid the release).
    int gate[2];
    if (pipe2(gate, O_CLOEXEC) != 0) gate[0] = gate[1] = -1;
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            // Named, so a benchmark can wait until the events are really gone.
            prctl(PR_SET_NAME, name, 0, 0, 0);
            // It must hold nothing else of launchprof's, and let go of the standard streams
            // first: an inherited stdout would keep a pipe reader (`launchprof run … | jq`)
            // waiting until the probes are released. Closing the probes' descriptors (they are
            // among the rest) is what waits.
            for (int fd = 0; fd < 3; fd++) close(fd);
            if (gate[1] >= 0) {
                close(gate[1]);
                char byte;
                while (read(gate[0], &byte, 1) < 0 && errno == EINTR) {}
            }
            if (close_range(3, ~0U, 0) != 0) {
                for (int i = 0; i < count; i++) close(fds[i]);
            }
            _exit(0);
        }
        for (int i = 0; i < count; i++) close(fds[i]);
        _exit(0);
    }
    for (int i = 0; i < count; i++) close(fds[i]);
    if (gate[0] >= 0) {
        close(gate[0]);
        close(gate[1]);
    }
    if (child > 0) {
        int status;
        while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {}
    }
}

uint64_t lp_uprobe_calibration_loop(int stepped, int count) {
    uint64_t (*volatile target)(uint64_t) =
        stepped ? lp_uprobe_calibration_stepped : lp_uprobe_calibration_emulated;
    uint64_t x = 0;
    uint64_t start = lp_now_ns();
    for (int i = 0; i < count; i++) x = target(x);
    uint64_t elapsed = lp_now_ns() - start;
    __asm__ volatile("" : : "r"(x));
    return elapsed;
}

// Not inlined, not optimised away: launchprof probes it in its own process to measure what one
// uprobe hit costs on this host (see UprobeCalibration).
// The first starts with a push (the kernel emulates it), the second with a lea (single-stepped
// out of line): the two costs a probe can have.
__attribute__((naked, noinline, used)) uint64_t lp_uprobe_calibration_emulated(uint64_t x) {
    __asm__ volatile("push %rbp\n\tpop %rbp\n\tlea 1(%rdi), %rax\n\tret");
}
__attribute__((naked, noinline, used)) uint64_t lp_uprobe_calibration_stepped(uint64_t x) {
    __asm__ volatile("lea 1(%rdi), %rax\n\tret");
}

int lp_tracepoint_probe_open(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd, int *fd, uint64_t *id) {
    return lp_tracepoint_probe_open_raw(pid, cpu, tracepoint_id, output_fd, 0, fd, id);
}

int lp_tracepoint_probe_open_raw(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd, int raw, int *fd,
                                 uint64_t *id) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = tracepoint_id;
    return open_probe_event(&attr, pid, cpu, output_fd, raw, fd, id);
}

int lp_tracepoint_hold_open(uint64_t tracepoint_id, int *fd) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = tracepoint_id;  // counting only: no buffer, nothing written per hit
    int result = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (result < 0) return errno;
    *fd = result;
    return 0;
}

int lp_perf_ring_open(int cpu, int data_pages, int *fd, void **base, size_t *length) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    // The probes' sample format and clock: PERF_EVENT_IOC_SET_OUTPUT accepts only a ring of the
    // same clock, and the records read back are the probes'.
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    // A reader polling the descriptor wakes when the ring is half full.
    attr.watermark = 1;
    attr.wakeup_watermark = (uint32_t)((size_t)data_pages * (size_t)sysconf(_SC_PAGESIZE) / 2);
    return lp_perf_open_ring(&attr, -1, cpu, data_pages, fd, base, length);
}

void lp_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
