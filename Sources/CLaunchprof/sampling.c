// Sampling with perf events (the ring buffer needs memory barriers). The samples' stacks are
// unwound in unwind.c and LaunchprofSampling's StackUnwinder.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// MARK: perf events

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags) {
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

// AX BX CX DX SI DI BP SP IP and R8-R15 (PERF_REG_X86_*: 0-8, 16-23).
static const uint64_t register_mask = 0x1ffULL | (0xffULL << 16);

static void stack_attr(struct perf_event_attr *attr, const lp_perf_options *options) {
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME
        | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr->sample_regs_user = register_mask;
    attr->sample_stack_user = options->stack_bytes;
}

static void common_attr(struct perf_event_attr *attr, const lp_perf_options *options) {
    attr->size = sizeof(*attr);
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;  // the clock of launchprof's timeline and the hooks
    attr->sample_id_all = 1;
    attr->inherit = options->all_threads;
    attr->exclude_hv = 1;
}

// The two events of a session; lp_perf_open_anchors opens the same kinds.
static void session_attrs(const lp_perf_options *options, struct perf_event_attr *clock,
                          struct perf_event_attr *switches) {
    // On-CPU samples every period of the thread's CPU time (kernel time, page faults, counts).
    memset(clock, 0, sizeof(*clock));
    common_attr(clock, options);
    clock->type = PERF_TYPE_SOFTWARE;
    clock->config = PERF_COUNT_SW_TASK_CLOCK;
    clock->sample_period = options->period_ns;
    stack_attr(clock, options);
    clock->context_switch = 1;  // PERF_RECORD_SWITCH: when the thread left and got the CPU back
    clock->mmap = 1;            // executable mappings (libraries dlopen'ed during the launch)
    clock->mmap2 = 1;
    clock->watermark = 1;
    clock->wakeup_watermark = (uint32_t)((size_t)options->pages * 4096 / 2);

    // A stack at every switch-out: what the thread was blocked in (or preempted in). Its kernel
    // call chain names the system call it blocked in (the __x64_sys_* frame); the user stack is
    // unwound offline like the on-CPU ones.
    memset(switches, 0, sizeof(*switches));
    common_attr(switches, options);
    switches->type = PERF_TYPE_SOFTWARE;
    switches->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    switches->sample_period = 1;
    stack_attr(switches, options);
    switches->sample_type |= PERF_SAMPLE_CALLCHAIN;
    switches->exclude_callchain_user = 1;
    switches->sample_max_stack = LP_KERNEL_CHAIN_DEPTH;
}

int lp_perf_open(pid_t pid, int cpu, const lp_perf_options *options, lp_perf_session *session) {
    memset(session, 0, sizeof(*session));
    session->fds[0] = session->fds[1] = -1;
    int error = 0;
    struct perf_event_attr clock, switches;
    session_attrs(options, &clock, &switches);
    struct perf_event_attr *attrs[2] = {&clock, &switches};
    for (int index = 0; index < 2; index++) {
        session->fds[index] = perf_event_open(attrs[index], pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (session->fds[index] < 0) {
            error = errno;
            goto fail;
        }
        if (ioctl(session->fds[index], PERF_EVENT_IOC_ID, &session->ids[index]) != 0) {
            error = errno;
            goto fail;
        }
    }
    session->data_bytes = (size_t)options->pages * 4096;
    session->ring_bytes = session->data_bytes + 4096;
    session->ring = mmap(NULL, session->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, session->fds[0], 0);
    if (session->ring == MAP_FAILED) {
        session->ring = NULL;
        error = errno;
        goto fail;
    }
    if (ioctl(session->fds[1], PERF_EVENT_IOC_SET_OUTPUT, session->fds[0]) != 0) {
        error = errno;
        goto fail;
    }
    return 0;
fail:
    lp_perf_close(session);
    return error;
}

int lp_perf_drain(lp_perf_session *session, uint8_t *buffer, size_t capacity, size_t *length) {
    *length = 0;
    if (!session->ring) return EBADF;
    lp_ring_reader ring = lp_ring_begin(session->ring, 4096, session->data_bytes);
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

int lp_perf_wait(const lp_perf_session *sessions, int count, int wake_fd, int timeout_ms) {
    struct pollfd fds[65];
    int used = 0;
    for (int i = 0; i < count && used < 64; i++) fds[used++] = (struct pollfd){.fd = sessions[i].fds[0], .events = POLLIN};
    if (wake_fd >= 0) fds[used++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    int result;
    do {
        result = poll(fds, (nfds_t)used, timeout_ms);
    } while (result < 0 && errno == EINTR);
    return result < 0 ? errno : 0;
}

int lp_perf_open_anchors(int fds[_Nonnull 2]) {
    // The first event of a kind switches on kernel static keys (the scheduler's perf hooks, the
    // software event) and allocates the call chain buffers, which patches kernel text: hundreds
    // of µs; the last one's close undoes it and waits for RCU: tens of ms. Disabled events of
    // the same kinds on launchprof itself keep all of it in place.
    lp_perf_options options = {.period_ns = 1000000, .stack_bytes = 8, .pages = 1};
    struct perf_event_attr clock, switches;
    session_attrs(&options, &clock, &switches);
    struct perf_event_attr *attrs[2] = {&clock, &switches};
    int error = 0;
    for (int index = 0; index < 2; index++) {
        attrs[index]->disabled = 1;
        attrs[index]->watermark = 0;
        attrs[index]->wakeup_watermark = 0;
        fds[index] = perf_event_open(attrs[index], 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fds[index] < 0 && !error) error = errno;
    }
    return error;
}

void lp_perf_close(lp_perf_session *session) {
    if (session->ring) munmap(session->ring, session->ring_bytes);
    session->ring = NULL;
    for (int index = 0; index < 2; index++) {
        if (session->fds[index] >= 0) close(session->fds[index]);
        session->fds[index] = -1;
    }
}

// MARK: Demangling

extern char *__cxa_demangle(const char *name, char *buffer, size_t *length, int *status);
extern char *swift_demangle(const char *name, size_t length, char *buffer, size_t *buffer_size,
                            uint32_t flags) __attribute__((weak));

char *lp_demangle_cxx(const char *name) {
    int status = 0;
    char *result = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? result : NULL;
}

char *lp_demangle_swift(const char *name) {
    if (!swift_demangle) return NULL;
    return swift_demangle(name, strlen(name), NULL, NULL, 0);
}

uint64_t lp_vdso_base(void) { return (uint64_t)getauxval(AT_SYSINFO_EHDR); }
