// The scheduler's events for thread states: perf events on the kernel's sched tracepoints, one
// ring buffer per CPU (sched_events.c).
#ifndef LP_SCHED_EVENTS_H
#define LP_SCHED_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if !__has_feature(nullability)
#define _Nonnull
#define _Nullable
#endif

/// Kernel frames kept per switch-out: enough to reach the system call's entry through a page
/// fault's path (~20 frames on kernel 6.x).
enum { LP_SCHED_STACK_DEPTH = 32 };

/// The events of one CPU, in the order of their identifiers in `ids`:
/// - followed tasks (launchprof's spawning thread and every task it creates, `inherit`):
///   0 `sched_switch` with the kernel stack, 1 major page faults with the address (and file
///   mappings), 2 `mm_filemap_add_to_page_cache` (absent: -1);
/// - the whole CPU: 3 `sched_switch` (who ran), 4 `sched_waking` and 5 `sched_wakeup_new`
///   (filtered to tasks newer than the launch, see lp_sched_filter_wakeups).
enum { LP_SCHED_EVENT_COUNT = 6 };
enum {
    LP_SCHED_FOLLOWED_SWITCH = 0,
    LP_SCHED_FOLLOWED_FAULT = 1,
    LP_SCHED_FOLLOWED_PAGE_CACHE = 2,
    LP_SCHED_CPU_SWITCH = 3,
    LP_SCHED_CPU_WAKING = 4,
    LP_SCHED_CPU_WAKEUP_NEW = 5,
};

/// Tracepoint ids (tracefs `events/<group>/<name>/id`); -1: absent.
typedef struct lp_sched_tracepoints {
    int sched_switch;
    int sched_waking;
    int sched_wakeup_new;
    int page_cache_add;
} lp_sched_tracepoints;

typedef struct lp_sched_cpu {
    int cpu;
    int fds[LP_SCHED_EVENT_COUNT];
    /// PERF_SAMPLE_IDENTIFIER of each event (0: not open).
    uint64_t ids[LP_SCHED_EVENT_COUNT];
    void *_Nullable ring;
    size_t ring_bytes;
    size_t data_bytes;
} lp_sched_cpu;

/// Opens the events of `cpu`, disabled, following `thread` (a thread of launchprof: the one that
/// will spawn the child) and mapping `pages` data pages (a power of two) shared by all six.
/// Returns 0 or errno; on failure nothing stays open.
/// The corresponding C function is perf_event_open(2).
int lp_sched_open(pid_t thread, int cpu, const lp_sched_tracepoints *_Nonnull tracepoints, uint32_t pages,
                  lp_sched_cpu *_Nonnull events);

/// Sets the kernel filter of the wake-up events (ftrace syntax, e.g. "pid > 1234").
int lp_sched_filter_wakeups(lp_sched_cpu *_Nonnull events, const char *_Nonnull filter);

/// Enables or disables all six events (the followed ones in the tasks created since too).
int lp_sched_enable(lp_sched_cpu *_Nonnull events, bool enable);

/// Copies whole records out of the ring into `buffer` (at most `capacity` bytes) and frees
/// their space; `*length` bytes were copied.
int lp_sched_drain(lp_sched_cpu *_Nonnull events, uint8_t *_Nonnull buffer, size_t capacity, size_t *_Nonnull length);

/// Waits up to `timeout_ms` for a ring to pass its watermark or `wake_fd` to be readable.
int lp_sched_wait(const lp_sched_cpu *_Nonnull events, int count, int wake_fd, int timeout_ms);

void lp_sched_close(lp_sched_cpu *_Nonnull events);
/// Closes `count` CPUs' events without waiting for the kernel to unregister their tracepoints
/// (an RCU grace period per tracepoint, ~30 ms each here, paid on the last close): a short-lived
/// grandchild, `lp-sched-free`, holds the last references and closes them.
void lp_sched_close_in_background(lp_sched_cpu *_Nonnull events, int count);

/// The calling thread's id (gettid(2)).
pid_t lp_sched_thread_id(void);

#endif
