// launchprof monitor's kernel events: tracepoint-type perf events (the scheduler's and task
// tracepoints, and the kprobe and uprobe events launchprof defines in tracefs) opened on every
// CPU for every process, their raw fields sampled into per-CPU ring buffers. C only for
// perf_event_open and the ring's memory; the records are parsed in Swift.
#ifndef LP_FIELD_H
#define LP_FIELD_H

#include <stddef.h>
#include <stdint.h>

#ifndef __has_feature
#define __has_feature(x) 0
/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (threads it starts later inherit the
/// mask) and returns a descriptor that reads them instead (signalfd): the monitor's loop polls it
/// with its other descriptors and stops cleanly. Returns 0 or an errno value.
int lp_field_stop_signals(int *_Nonnull fd);

/// The signal waiting on a descriptor from lp_field_stop_signals, or 0.
int lp_field_stop_signal_read(int fd);

#endif
#if !__has_feature(nullability)
#define _Nonnull
#define _Nullable
/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (threads it starts later inherit the
/// mask) and returns a descriptor that reads them instead (signalfd): the monitor's loop polls it
/// with its other descriptors and stops cleanly. Returns 0 or an errno value.
int lp_field_stop_signals(int *_Nonnull fd);

/// The signal waiting on a descriptor from lp_field_stop_signals, or 0.
int lp_field_stop_signal_read(int fd);

#endif

/// One sample read from a ring: the event's id (PERF_EVENT_IOC_ID), the process and thread it
/// came from, its time (CLOCK_MONOTONIC) and where its raw fields were copied.
typedef struct lp_field_record {
    uint64_t id;
    uint64_t time_ns;
    int32_t pid;
    int32_t tid;
    uint32_t raw_offset;
    uint32_t raw_size;
} lp_field_record;

/// Opens tracefs event `tracepoint_id` (PERF_TYPE_TRACEPOINT) on `cpu` for every process,
/// disabled: each hit a sample with its id, pid/tid, CLOCK_MONOTONIC time and raw fields. Its
/// samples go to `output_fd`'s ring when that is ≥ 0 (else to its own). `filter`, when given, is
/// the kernel's event filter (PERF_EVENT_IOC_SET_FILTER). `wakeup_bytes`: a poll on the ring's
/// descriptor wakes once that much is waiting. Returns 0 or an errno value.
int lp_field_event_open(uint64_t tracepoint_id, int cpu, int output_fd, const char *_Nullable filter,
                        uint32_t wakeup_bytes, int *_Nonnull fd, uint64_t *_Nonnull id);

/// Starts an event opened by lp_field_event_open.
int lp_field_event_enable(int fd);

/// Reads what is waiting in a ring (mapped with lp_perf_ring_map): up to `capacity` records,
/// their raw fields copied into `raw` (up to `raw_capacity` bytes). Stops early, leaving the
/// rest in the ring, when either is full (`*more` is then 1). Samples the kernel dropped because
/// the ring was full are added to `*lost`; a record that does not parse ends the read and is
/// counted in `*malformed` with everything after it.
int lp_field_ring_read(void *_Nonnull base, size_t length, lp_field_record *_Nonnull records, int capacity,
                       uint8_t *_Nonnull raw, size_t raw_capacity, int *_Nonnull count, uint64_t *_Nonnull lost,
                       uint64_t *_Nonnull malformed, int *_Nonnull more);

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (threads it starts later inherit the
/// mask) and returns a descriptor that reads them instead (signalfd): the monitor's loop polls it
/// with its other descriptors and stops cleanly. Returns 0 or an errno value.
int lp_field_stop_signals(int *_Nonnull fd);

/// The signal waiting on a descriptor from lp_field_stop_signals, or 0.
int lp_field_stop_signal_read(int fd);

#endif
