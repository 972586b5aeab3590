// The scheduler's events around a launch, for its threads' states: perf events on the kernel's
// sched tracepoints, all of a CPU in one ring buffer (the ring needs memory barriers, and the
// attribute structures are easier to fill in C).
//
// Two groups per CPU. The followed group is opened on launchprof's spawning thread with
// `inherit`, so every task it creates from then on — the child, its threads, its children —
// carries the events from its first instruction, the exec included: their switch-outs with the
// kernel stack (what the wait was), their major faults and the pages their reads brought in.
// The CPU group sees every switch on the CPU (who ran while a followed thread waited for it) and
// the wake-ups (whose context is the waker's: the X server, a thread of the app, an interrupt);
// the kernel delivers a wake-up only to the waker's events, so it is watched CPU-wide, filtered
// in the kernel to tasks newer than the launch.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int open_event(struct perf_event_attr *attr, pid_t pid, int cpu, int group) {
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void common_attr(struct perf_event_attr *attr, uint32_t type, uint64_t config) {
    memset(attr, 0, sizeof(*attr));
    attr->size = sizeof(*attr);
    attr->type = type;
    attr->config = config;
    attr->sample_period = 1;
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;  // the clock of launchprof's timeline
    attr->sample_id_all = 1;
}

static void tracepoint_attr(struct perf_event_attr *attr, int id) {
    common_attr(attr, PERF_TYPE_TRACEPOINT, (uint64_t)id);
    attr->sample_type |= PERF_SAMPLE_RAW;
}

int lp_sched_open(pid_t thread, int cpu, const lp_sched_tracepoints *tracepoints, uint32_t pages, lp_sched_cpu *events) {
    memset(events, 0, sizeof(*events));
    events->cpu = cpu;
    for (int index = 0; index < LP_SCHED_EVENT_COUNT; index++) events->fds[index] = -1;
    struct perf_event_attr attrs[LP_SCHED_EVENT_COUNT];
    bool wanted[LP_SCHED_EVENT_COUNT] = {true, true, tracepoints->page_cache_add >= 0, true, true, true};

    tracepoint_attr(&attrs[LP_SCHED_FOLLOWED_SWITCH], tracepoints->sched_switch);
    attrs[LP_SCHED_FOLLOWED_SWITCH].sample_type |= PERF_SAMPLE_CALLCHAIN;
    attrs[LP_SCHED_FOLLOWED_SWITCH].exclude_callchain_user = 1;
    attrs[LP_SCHED_FOLLOWED_SWITCH].sample_max_stack = LP_SCHED_STACK_DEPTH;
    // Switch-ins of the followed tasks (PERF_RECORD_SWITCH), from perf's own context-switch
    // hook: the tracepoint is not seen for every task (a kernel can hide its own agents' switches,
    // and with them the switch-ins of whatever follows them).
    attrs[LP_SCHED_FOLLOWED_SWITCH].context_switch = 1;
    // The ring's owner: the drain thread is woken when half of it is full.
    attrs[LP_SCHED_FOLLOWED_SWITCH].watermark = 1;
    attrs[LP_SCHED_FOLLOWED_SWITCH].wakeup_watermark = pages * 4096 / 2;

    common_attr(&attrs[LP_SCHED_FOLLOWED_FAULT], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
    attrs[LP_SCHED_FOLLOWED_FAULT].sample_type |= PERF_SAMPLE_ADDR;
    attrs[LP_SCHED_FOLLOWED_FAULT].mmap = 1;  // the files behind the faulting addresses
    attrs[LP_SCHED_FOLLOWED_FAULT].mmap2 = 1;
    attrs[LP_SCHED_FOLLOWED_FAULT].mmap_data = 1;

    if (wanted[LP_SCHED_FOLLOWED_PAGE_CACHE]) tracepoint_attr(&attrs[LP_SCHED_FOLLOWED_PAGE_CACHE], tracepoints->page_cache_add);
    tracepoint_attr(&attrs[LP_SCHED_CPU_SWITCH], tracepoints->sched_switch);
    tracepoint_attr(&attrs[LP_SCHED_CPU_WAKING], tracepoints->sched_waking);
    tracepoint_attr(&attrs[LP_SCHED_CPU_WAKEUP_NEW], tracepoints->sched_wakeup_new);

    for (int index = 0; index < LP_SCHED_EVENT_COUNT; index++) {
        if (!wanted[index]) continue;
        bool followed = index < LP_SCHED_CPU_SWITCH;
        bool leader = index == LP_SCHED_FOLLOWED_SWITCH || index == LP_SCHED_CPU_SWITCH;
        attrs[index].inherit = followed;
        attrs[index].disabled = leader;  // members follow their leader
        int group = leader ? -1 : events->fds[followed ? LP_SCHED_FOLLOWED_SWITCH : LP_SCHED_CPU_SWITCH];
        int error = 0;
        events->fds[index] = open_event(&attrs[index], followed ? thread : -1, cpu, group);
        if (events->fds[index] < 0) error = errno;
        else if (ioctl(events->fds[index], PERF_EVENT_IOC_ID, &events->ids[index]) != 0) error = errno;
        if (error) {
            lp_sched_close(events);
            return error;
        }
    }
    events->data_bytes = (size_t)pages * 4096;
    events->ring_bytes = events->data_bytes + 4096;
    events->ring = mmap(NULL, events->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, events->fds[0], 0);
    if (events->ring == MAP_FAILED) {
        events->ring = NULL;
        int error = errno;
        lp_sched_close(events);
        return error;
    }
    for (int index = 1; index < LP_SCHED_EVENT_COUNT; index++) {
        if (events->fds[index] < 0) continue;
        if (ioctl(events->fds[index], PERF_EVENT_IOC_SET_OUTPUT, events->fds[0]) != 0) {
            int error = errno;
            lp_sched_close(events);
            return error;
        }
    }
    return 0;
}

int lp_sched_filter_wakeups(lp_sched_cpu *events, const char *filter) {
    for (int index = LP_SCHED_CPU_WAKING; index <= LP_SCHED_CPU_WAKEUP_NEW; index++) {
        if (events->fds[index] >= 0 && ioctl(events->fds[index], PERF_EVENT_IOC_SET_FILTER, filter) != 0) return errno;
    }
    return 0;
}

int lp_sched_enable(lp_sched_cpu *events, bool enable) {
    unsigned long request = enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
    for (int leader = 0; leader < LP_SCHED_EVENT_COUNT; leader += LP_SCHED_CPU_SWITCH) {
        if (events->fds[leader] >= 0 && ioctl(events->fds[leader], request, PERF_IOC_FLAG_GROUP) != 0) return errno;
    }
    return 0;
}

int lp_sched_drain(lp_sched_cpu *events, uint8_t *buffer, size_t capacity, size_t *length) {
    *length = 0;
    if (!events->ring) return EBADF;
    lp_ring_reader ring = lp_ring_begin(events->ring, 4096, events->data_bytes);
    size_t copied = 0;
    while (lp_ring_next(&ring) == 1 && copied + ring.record_size <= capacity) {
        lp_ring_copy(&ring, 0, buffer + copied, ring.record_size);
        copied += ring.record_size;
        lp_ring_advance(&ring);
    }
    lp_ring_end(&ring);
    *length = copied;
    return 0;
}

int lp_sched_wait(const lp_sched_cpu *events, int count, int wake_fd, int timeout_ms) {
    struct pollfd fds[257];
    int used = 0;
    for (int i = 0; i < count && used < 256; i++) fds[used++] = (struct pollfd){.fd = events[i].fds[0], .events = POLLIN};
    if (wake_fd >= 0) fds[used++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    int result;
    do {
        result = poll(fds, (nfds_t)used, timeout_ms);
    } while (result < 0 && errno == EINTR);
    return result < 0 ? errno : 0;
}

void lp_sched_close(lp_sched_cpu *events) {
    if (events->ring) munmap(events->ring, events->ring_bytes);
    events->ring = NULL;
    for (int index = LP_SCHED_EVENT_COUNT - 1; index >= 0; index--) {
        if (events->fds[index] >= 0) close(events->fds[index]);
        events->fds[index] = -1;
    }
}

void lp_sched_close_in_background(lp_sched_cpu *events, int count) {
    int fds[256 * LP_SCHED_EVENT_COUNT];
    int used = 0;
    for (int cpu = 0; cpu < count; cpu++) {
        if (events[cpu].ring) munmap(events[cpu].ring, events[cpu].ring_bytes);
        events[cpu].ring = NULL;
        for (int index = LP_SCHED_EVENT_COUNT - 1; index >= 0; index--) {
            if (events[cpu].fds[index] >= 0 && used < (int)(sizeof fds / sizeof fds[0])) fds[used++] = events[cpu].fds[index];
            else if (events[cpu].fds[index] >= 0) close(events[cpu].fds[index]);
            events[cpu].fds[index] = -1;
        }
    }
    if (used > 0) lp_perf_release_in_background_named(fds, used, "lp-sched-free");
}

pid_t lp_sched_thread_id(void) { return (pid_t)syscall(SYS_gettid); }
