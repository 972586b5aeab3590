// Sampling a launch with perf events, and libunwind for the frames of the samples that
// launchprof's own call frame rules (LaunchprofELF) cannot take.
#ifndef LP_SAMPLING_H
#define LP_SAMPLING_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if !__has_feature(nullability)
#define _Nonnull
#define _Nullable
#endif

/// The user registers every stack sample carries, in perf's order: AX BX CX DX SI DI BP SP IP
/// R8 … R15 (PERF_REG_X86_*).
enum { LP_SAMPLE_REGISTER_COUNT = 17 };
enum { LP_SAMPLE_REGISTER_SP = 7, LP_SAMPLE_REGISTER_IP = 8 };

/// What the sampler asks of the kernel.
typedef struct lp_perf_options {
    /// On-CPU sampling period in ns of the thread's CPU time (task-clock).
    uint64_t period_ns;
    /// Bytes of user stack copied with each sample.
    uint32_t stack_bytes;
    /// Follow the threads the process creates (inherit), not only its main thread. The kernel
    /// maps an inherited event's buffer only per CPU: open one session per CPU then.
    bool all_threads;
    /// Ring buffer data pages (a power of two).
    uint32_t pages;
} lp_perf_options;

/// Kernel frames kept per switch-out sample: deep enough to reach the system call's entry
/// from `schedule` through a file system's read path.
enum { LP_KERNEL_CHAIN_DEPTH = 48 };

/// One sampling session of one process: two events sharing one ring buffer.
typedef struct lp_perf_session {
    int fds[2];
    /// Identifiers of the events (PERF_SAMPLE_IDENTIFIER): task clock, context switches.
    uint64_t ids[2];
    void *_Nullable ring;
    size_t ring_bytes;
    size_t data_bytes;
} lp_perf_session;

/// Opens the events on `pid` (which must not have run any user code yet: stopped at its exec),
/// on every CPU (`cpu` = -1) or on one (with `all_threads`), and maps their ring buffer.
/// Returns 0 or errno; on failure nothing stays open.
/// The corresponding C function is perf_event_open(2).
int lp_perf_open(pid_t pid, int cpu, const lp_perf_options *_Nonnull options, lp_perf_session *_Nonnull session);

/// Copies whole records out of the ring buffer into `buffer` (at most `capacity` bytes) and
/// frees their space. `*length` bytes were copied.
int lp_perf_drain(lp_perf_session *_Nonnull session, uint8_t *_Nonnull buffer, size_t capacity, size_t *_Nonnull length);

/// Waits up to `timeout_ms` for one of `count` ring buffers to fill past its watermark or for
/// `wake_fd` to be readable. Returns 0 or errno.
int lp_perf_wait(const lp_perf_session *_Nonnull sessions, int count, int wake_fd, int timeout_ms);

/// Opens, on launchprof itself, disabled events of the kinds a launch's session uses and keeps
/// them: the first event of a kind switches on kernel static keys and call chain buffers
/// (hundreds of µs of text patching while the child waits at its exec) and the last one's close
/// switches them off (tens of ms). With these open, a launch's events attach and go in
/// microseconds. Returns 0 or the first errno; `fds` holds -1 for a failure.
int lp_perf_open_anchors(int fds[_Nonnull 2]);

/// Records lost to a full buffer so far are reported as PERF_RECORD_LOST; this closes the events.
void lp_perf_close(lp_perf_session *_Nonnull session);

// MARK: Offline unwinding

/// One loadable segment of an object: file bytes at `offset` are mapped at `vaddr` + bias.
typedef struct lp_segment {
    uint64_t vaddr, offset, file_size;
} lp_segment;

/// An object mapped in the sampled process, with its file's bytes mapped in launchprof.
typedef struct lp_unwind_object {
    uint64_t bias;
    /// Its executable mapping in the process.
    uint64_t text_start, text_end;
    const uint8_t *_Nonnull image;
    uint64_t image_size;
    const lp_segment *_Nonnull segments;
    int segment_count;
    /// PT_GNU_EH_FRAME's vaddr (unrelocated), 0 when the object has none.
    uint64_t eh_frame_hdr;
} lp_unwind_object;

typedef struct lp_unwinder lp_unwinder;

/// An unwinder with libunwind's global cache on. Returns NULL when out of memory or when
/// libunwind cannot be loaded (lp_unwind_library_missing).
lp_unwinder *_Nullable lp_unwinder_create(void);
void lp_unwinder_destroy(lp_unwinder *_Nullable unwinder);
/// Adds an object (its segments are copied; `image` must outlive the unwinder). Returns 0 or errno.
int lp_unwinder_add_object(lp_unwinder *_Nonnull unwinder, const lp_unwind_object *_Nonnull object);
/// Forgets every object and flushes libunwind's caches (the mappings changed).
void lp_unwinder_reset(lp_unwinder *_Nonnull unwinder);
/// Unwinds one sample with libunwind, or goes on with one from the frame launchprof's call frame
/// rules could not take (a CFA expression, a signal frame): `registers` in perf's order
/// (LP_SAMPLE_REGISTER_COUNT), `stack` the bytes copied from the sample's stack pointer
/// (`stack_address`) up. Stores up to `capacity` instruction pointers, innermost first, in `ips`.
/// Returns 0 or a negative libunwind error (the frames before it are kept).
int lp_unwinder_unwind(lp_unwinder *_Nonnull unwinder, const uint64_t *_Nonnull registers,
                       const uint8_t *_Nullable stack, uint64_t stack_address, size_t stack_size,
                       uint64_t *_Nonnull ips, int capacity, int *_Nonnull count);

/// Copies a stopped tracee thread's registers (perf's sample order, LP_SAMPLE_REGISTER_COUNT)
/// and its stack from the stack pointer up, at most `capacity` bytes and no further than its
/// mapping goes, so that the thread is unwound as a sample is. The caller must be its tracer.
/// Returns 0 or errno; `*length` bytes were copied.
int lp_thread_snapshot(pid_t tid, uint64_t *_Nonnull registers, uint8_t *_Nonnull stack, size_t capacity,
                       size_t *_Nonnull length);

// MARK: Demangling

/// C++ names through the C++ ABI's `__cxa_demangle`. Returns a malloc'ed string or NULL.
char *_Nullable lp_demangle_cxx(const char *_Nonnull name);
/// Swift names through the Swift runtime's `swift_demangle`. Returns a malloc'ed string or NULL.
char *_Nullable lp_demangle_swift(const char *_Nonnull name);

/// Where the kernel mapped launchprof's own vDSO (AT_SYSINFO_EHDR), 0 without one.
uint64_t lp_vdso_base(void);

#endif
