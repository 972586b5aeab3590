// launchprof monitor's kernel events (see lp_field.h).
#define _GNU_SOURCE
#include "lp_field.h"
#include "lp_perf_ring.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

enum { FIELD_SAMPLE_TYPE = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW };

int lp_field_event_open(uint64_t tracepoint_id, int cpu, int output_fd, const char *filter, uint32_t wakeup_bytes,
                        int *fd, uint64_t *id) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = tracepoint_id;
    attr.sample_period = 1;
    attr.sample_type = FIELD_SAMPLE_TYPE;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.disabled = 1;
    if (wakeup_bytes > 0) {
        attr.watermark = 1;
        attr.wakeup_watermark = wakeup_bytes;
    }
    int result = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (result < 0) return errno;
    if ((filter && ioctl(result, PERF_EVENT_IOC_SET_FILTER, filter) < 0) ||
        (output_fd >= 0 && ioctl(result, PERF_EVENT_IOC_SET_OUTPUT, output_fd) < 0) ||
        ioctl(result, PERF_EVENT_IOC_ID, id) < 0) {
        int error = errno;
        close(result);
        return error;
    }
    *fd = result;
    return 0;
}

int lp_field_event_enable(int fd) { return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? errno : 0; }

int lp_field_ring_read(void *base, size_t length, lp_field_record *records, int capacity, uint8_t *raw,
                       size_t raw_capacity, int *count, uint64_t *lost, uint64_t *malformed, int *more) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    lp_ring_reader ring = lp_ring_begin(base, page, length - page);
    const size_t header = sizeof(struct perf_event_header);
    size_t raw_used = 0;
    int stored = 0;
    *more = 0;
    int framed;
    while ((framed = lp_ring_next(&ring)) != 0) {
        if (framed < 0) {
            // A record the kernel did not write this way: what follows cannot be framed.
            *malformed += 1;
            lp_ring_discard(&ring);
            break;
        }
        if (ring.type == PERF_RECORD_SAMPLE) {
            // IDENTIFIER (8), TID (4 + 4), TIME (8), RAW (4 + size), in that order.
            enum { FIXED = 8 + 8 + 8 + 4 };
            uint8_t fixed[FIXED];
            if (ring.record_size < header + FIXED) {
                *malformed += 1;
            } else {
                lp_ring_copy(&ring, header, fixed, FIXED);
                uint32_t raw_size;
                memcpy(&raw_size, fixed + 24, 4);
                if (raw_size > ring.record_size - header - FIXED) {
                    *malformed += 1;
                } else if (stored == capacity || raw_used + raw_size > raw_capacity) {
                    *more = 1;
                    break;
                } else {
                    lp_field_record *out = &records[stored++];
                    memcpy(&out->id, fixed, 8);
                    memcpy(&out->pid, fixed + 8, 4);
                    memcpy(&out->tid, fixed + 12, 4);
                    memcpy(&out->time_ns, fixed + 16, 8);
                    out->raw_offset = (uint32_t)raw_used;
                    out->raw_size = raw_size;
                    lp_ring_copy(&ring, header + FIXED, raw + raw_used, raw_size);
                    raw_used += raw_size;
                }
            }
        } else if (ring.type == PERF_RECORD_LOST && ring.record_size >= header + 16) {
            uint64_t dropped;
            lp_ring_copy(&ring, header + 8, &dropped, 8);
            *lost += dropped;
        }
        lp_ring_advance(&ring);
    }
    lp_ring_end(&ring);
    *count = stored;
    return 0;
}

int lp_field_stop_signals(int *fd) {
    sigset_t ending;
    sigemptyset(&ending);
    sigaddset(&ending, SIGINT);
    sigaddset(&ending, SIGTERM);
    sigaddset(&ending, SIGHUP);
    int error = pthread_sigmask(SIG_BLOCK, &ending, NULL);
    if (error != 0) return error;
    int result = signalfd(-1, &ending, SFD_CLOEXEC | SFD_NONBLOCK);
    if (result < 0) return errno;
    *fd = result;
    return 0;
}

int lp_field_stop_signal_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t count = read(fd, &info, sizeof info);
    return count == (ssize_t)sizeof info ? (int)info.ssi_signo : 0;
}
