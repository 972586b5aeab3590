// The C that launchprof needs because Swift cannot go there: the code between fork and exec,
// variadic ptrace, wait-status macros, an async-signal-safe interrupt handler, and libunwind's
// macro-named API. Every function returns 0 or an errno value; results go to out-parameters.
#ifndef CLAUNCHPROF_H
#define CLAUNCHPROF_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if !__has_feature(nullability)
#define _Nonnull
#define _Nullable
#endif

enum { LP_SPAWN_CPU_INHERIT = -1, LP_SPAWN_CPU_LAUNCHPROFS = -2 };

/// The descriptor the child gets `keep_fd` as (LAUNCHPROF_HOOK_FD): at most 9, so every POSIX
/// shell can redirect to it (dash refuses `>&13` with "Bad fd number").
enum { LP_CHILD_HOOK_FD = 9 };

/// What the child does between fork and exec.
typedef struct lp_spawn_options {
    /// Descriptors installed as the child's 0, 1, 2 (-1: inherit launchprof's).
    int stdin_fd, stdout_fd, stderr_fd;
    /// A descriptor passed through to the child as LP_CHILD_HOOK_FD (-1: none). It is the hook
    /// channel; every other descriptor launchprof holds is close-on-exec.
    int keep_fd;
    /// Working directory (NULL: launchprof's).
    const char *_Nullable cwd;
    /// Stop under ptrace at the exec (PTRACE_TRACEME).
    bool trace;
    /// Pin the child to this CPU before exec; LP_SPAWN_CPU_INHERIT: keep the spawning thread's
    /// mask; LP_SPAWN_CPU_LAUNCHPROFS: launchprof's own mask (from lp_affinity_save) although
    /// the spawning thread is pinned.
    int cpu;
    /// Put the child in its own process group, so the terminal's Ctrl-C reaches launchprof only.
    bool new_process_group;
    /// Install a seccomp filter that stops the child (and its descendants) at every listen(2)
    /// with PTRACE_EVENT_SECCOMP, so a server's readiness is seen without tracing every syscall.
    bool trap_listen;
} lp_spawn_options;

/// Records which signal dispositions the child must reset (those launchprof handles or
/// ignores). Call after installing signal handlers, before timed spawns; without it every spawn
/// resets all signals.
void lp_spawn_prepare(void);

/// Starts `path` with `argv` and `envp`. On success `*pid` is the child. When the exec itself
/// fails, returns its errno (ENOENT, EACCES, ENOEXEC, …) and the child has already been reaped.
/// The corresponding C functions are vfork(2) and execve(2).
int lp_spawn(const char *_Nonnull path, char *const _Nullable *_Nonnull argv,
             char *const _Nullable *_Nonnull envp, const lp_spawn_options *_Nonnull options,
             pid_t *_Nonnull pid);

/// The ptrace requests, options and events the tracer uses (glibc declares them as enums Swift
/// does not import usefully).
enum {
    LP_PTRACE_CONT = 7,
    LP_PTRACE_SINGLESTEP = 9,
    LP_PTRACE_SETOPTIONS = 0x4200,
    LP_PTRACE_GETEVENTMSG = 0x4201,
    LP_PTRACE_GETSIGINFO = 0x4202,
    LP_PTRACE_SYSCALL = 24,
};
enum {
    LP_PTRACE_O_TRACESYSGOOD = 1,
    LP_PTRACE_O_TRACEFORK = 1 << 1,
    LP_PTRACE_O_TRACEVFORK = 1 << 2,
    LP_PTRACE_O_TRACECLONE = 1 << 3,
    LP_PTRACE_O_TRACEEXEC = 1 << 4,
    LP_PTRACE_O_TRACESECCOMP = 1 << 7,
    LP_PTRACE_O_EXITKILL = 1 << 20,
};
enum {
    LP_PTRACE_EVENT_FORK = 1,
    LP_PTRACE_EVENT_VFORK = 2,
    LP_PTRACE_EVENT_CLONE = 3,
    LP_PTRACE_EVENT_EXEC = 4,
    LP_PTRACE_EVENT_SECCOMP = 7,
};

/// ptrace(2) with its variadic arguments made explicit. For PEEK requests the word read is
/// stored in `*result`. Returns 0 or errno.
int lp_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data, long *_Nullable result);

/// One wait result, decoded from the status word.
typedef enum lp_wait_kind {
    LP_WAIT_EXITED = 1,   // value = exit code
    LP_WAIT_SIGNALED = 2, // value = signal, core_dumped
    LP_WAIT_STOPPED = 3,  // value = stop signal, event = PTRACE_EVENT_* (0 if none)
} lp_wait_kind;

typedef struct lp_wait_result {
    pid_t pid;
    lp_wait_kind kind;
    int value;
    int event;
    bool core_dumped;
    /// CLOCK_MONOTONIC ns right after the wait returned.
    uint64_t at_ns;
    /// The ended child's page faults (wait4's rusage), when kind is EXITED or SIGNALED: major
    /// ones read a page from disk, minor ones found it in memory.
    uint64_t major_faults;
    uint64_t minor_faults;
} lp_wait_result;

/// wait4(pid, …, __WALL | __WNOTHREAD) retried on EINTR, decoded: only the calling thread's
/// children and tracees, so the tracer never reaps processes other threads started.
/// Returns 0 or errno (ECHILD).
int lp_wait(pid_t pid, bool nohang, lp_wait_result *_Nonnull result);

/// pipe2(2) with O_CLOEXEC (and O_NONBLOCK when asked). Returns 0 or errno.
int lp_pipe(int fds[_Nonnull 2], bool nonblocking);

/// pidfd_open(2): a descriptor that becomes readable when `pid` ends, whoever its parent is.
/// Returns 0 or errno.
int lp_pidfd_open(pid_t pid, int *_Nonnull fd);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t lp_now_ns(void);

/// epoll_create1(EPOLL_CLOEXEC). Returns 0 or errno.
int lp_epoll_create(int *_Nonnull fd);
/// Watches `fd` for input (level-triggered; `once`: EPOLLONESHOT). Returns 0 or errno.
int lp_epoll_add(int epoll_fd, int fd, bool once);
/// Stops watching `fd`. Returns 0 or errno.
int lp_epoll_remove(int epoll_fd, int fd);
/// Waits (EINTR retried) until a watched descriptor is ready; stores up to `capacity` (at most 16)
/// ready descriptors in `ready`. Returns their count or -errno.
int lp_epoll_wait(int epoll_fd, int *_Nonnull ready, int capacity);
/// A non-blocking CLOCK_MONOTONIC timerfd. Returns 0 or errno.
int lp_timer_create(int *_Nonnull fd);
/// Arms the timer to expire at `deadline_ns` (CLOCK_MONOTONIC, absolute), or disarms it for 0;
/// either drops an expiry not read yet. Returns 0 or errno.
int lp_timer_set(int fd, uint64_t deadline_ns);

/// Reads `length` bytes at `address` in `pid` (process_vm_readv). Returns 0 or errno (EFAULT,
/// ESRCH, or EIO for a short read).
int lp_read_memory(pid_t pid, uint64_t address, void *_Nonnull buffer, size_t length);

/// Reads `count` blocks of `block_size` bytes, one at each address, into `blocks` (laid end to
/// end) in one system call per 64 blocks. Returns 0 or errno (EIO when a block is unreadable).
int lp_read_blocks(pid_t pid, const uint64_t *_Nonnull addresses, size_t block_size,
                   void *_Nonnull blocks, int count);

/// Reads `count` 8-byte words at the given addresses in one system call.
int lp_read_words(pid_t pid, const uint64_t *_Nonnull addresses, uint64_t *_Nonnull words,
                  int count);

/// The registers a breakpoint handler needs. x86_64: pc = rip, arg0 = rdi, sp = rsp.
typedef struct lp_registers {
    uint64_t pc, sp, arg0, arg1, arg2, ret;
} lp_registers;

int lp_get_registers(pid_t pid, lp_registers *_Nonnull registers);
/// Rewinds the program counter (after an int3 the pc is one past the breakpoint).
int lp_set_pc(pid_t pid, uint64_t pc);

/// Replaces the byte at `address` with int3, returning the original byte in `*original`.
int lp_insert_breakpoint(pid_t pid, uint64_t address, uint8_t *_Nonnull original);
/// Writes `word` (8 bytes) at `address` in the text of `pid` (PTRACE_POKETEXT).
int lp_poke_word(pid_t pid, uint64_t address, uint64_t word);

/// Puts `original` back at `address`.
int lp_remove_breakpoint(pid_t pid, uint64_t address, uint8_t original);

/// sched_setaffinity for a thread or process: pin to `cpu`, or (cpu < 0) allow all CPUs the
/// calling thread had when `lp_affinity_save` ran.
int lp_pin(pid_t tid, int cpu);
/// The CPU the calling thread pinned itself to with `lp_pin(0, …)`, or -1.
int lp_thread_pinned_cpu(void);
void lp_affinity_save(void);
int lp_affinity_restore(pid_t tid);
/// PTRACE_CONT (delivering `signal`, 0 for none) of a child pinned to the calling thread's CPU,
/// then its mask restored (`lp_affinity_restore`) without letting it run in between: 0 or the
/// errno of the request.
int lp_cont_then_unpin(pid_t pid, int signal);
/// The CPU the calling thread runs on.
int lp_current_cpu(void);

// MARK: Interrupts and the table of live children

/// Installs SIGINT/SIGTERM/SIGHUP handlers that SIGKILL every registered child and record the
/// signal. Async-signal-safe; idempotent.
void lp_install_interrupt_handler(void);

/// Sets `handler` (NULL: the default action) for SIGINT, SIGTERM and SIGHUP, the signals that end
/// launchprof.
void lp_handle_ending_signals(void (*_Nullable handler)(int));
/// Blocks (1) or unblocks (0) SIGINT, SIGTERM and SIGHUP in the calling thread.
void lp_set_ending_signals_blocked(int blocked);
/// Runs this program again (`argv`, /proc/self/exe) in a session of its own at nice -20 and in
/// that session's scheduler autogroup, waits for it (passing SIGINT, SIGTERM and SIGHUP on) and
/// stores its wait status: 0. -1 where raising the priority is not permitted, or when `marker`
/// is set in the environment (this is the rerun): the caller then goes on itself.
int lp_rerun_at_high_priority(char *_Nullable const *_Nonnull argv, const char *_Nonnull marker, int *_Nonnull wait_status);
/// The signal that interrupted launchprof, or 0.
int lp_interrupted(void);
/// When the first ending signal arrived (CLOCK_MONOTONIC ns; 0: none yet).
uint64_t lp_interrupted_at_ns(void);
/// Registers / unregisters a child that must not outlive launchprof.
void lp_track_child(pid_t pid);
void lp_untrack_child(pid_t pid);
/// SIGKILLs every registered child (used on cancellation).
void lp_kill_tracked_children(void);

/// The CPU's brand string (/proc/cpuinfo's "model name") into `out`; -1 where CPUID has none.
int lp_cpu_brand(char *_Nonnull out, size_t capacity);
/// Sets `attributes` (a pthread_attr_t) so that the thread runs on the caller's allowed CPUs
/// other than the one it runs on, and returns that one; leaves them alone (returns -1) when
/// there is no other.
int lp_thread_attr_other_cpu(void *_Nonnull attributes);
/// A thread's CPU affinity, saved to be restored (a cpu_set_t's bytes).
typedef struct { unsigned long bits[16]; } lp_cpu_mask;
/// Keeps the calling thread on `cpu` until `lp_restore_affinity(saved)`; -1 if it cannot.
int lp_pin_self(int cpu, lp_cpu_mask *_Nonnull saved);
void lp_restore_affinity(const lp_cpu_mask *_Nonnull saved);
/// How many CPUs the calling thread may run on (1 where that cannot be read).
int lp_allowed_cpu_count(void);
/// The CPUs the calling thread may run on, ascending, at most `capacity` into `out`; their count.
int lp_allowed_cpus(int *_Nonnull out, int capacity);

/// Page flags two threads of the loader-work walk mark and read at once: relaxed atomic byte
/// stores and loads (plain moves on x86-64). A flag only ever goes from false to true, and a
/// stale false only costs a test that marks nothing new. A set flag is not stored again: most
/// marks are of pages already marked, and a store would take the cache line from the other
/// thread's core every time.
static inline void lp_flag_set(bool *_Nonnull flags, long index) {
    if (!__atomic_load_n(&flags[index], __ATOMIC_RELAXED)) __atomic_store_n(&flags[index], true, __ATOMIC_RELAXED);
}
static inline bool lp_flag_get(const bool *_Nonnull flags, long index) {
    return __atomic_load_n(&flags[index], __ATOMIC_RELAXED);
}

/// The walk's candidate masks (one bit per scope member, per name), which either thread adds
/// to: relaxed atomic OR and load.
static inline void lp_mask_add(uint64_t *_Nonnull words, long index, uint64_t bits) {
    __atomic_fetch_or(&words[index], bits, __ATOMIC_RELAXED);
}
static inline uint64_t lp_mask_get(const uint64_t *_Nonnull words, long index) {
    return __atomic_load_n(&words[index], __ATOMIC_RELAXED);
}

/// A member's candidate index, built once by whichever walk thread first needs it: 0 not built,
/// 1 being built, 2 built. `lp_index_claim` makes the caller the builder (true) if nobody is;
/// `lp_index_publish` (release) and `lp_index_ready` (acquire) order the masks' bits before it.
static inline bool lp_index_claim(uint8_t *_Nonnull states, long member) {
    uint8_t expected = 0;
    return __atomic_compare_exchange_n(&states[member], &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}
static inline void lp_index_publish(uint8_t *_Nonnull states, long member) {
    __atomic_store_n(&states[member], 2, __ATOMIC_RELEASE);
}
static inline bool lp_index_ready(const uint8_t *_Nonnull states, long member) {
    return __atomic_load_n(&states[member], __ATOMIC_ACQUIRE) == 2;
}

/// Starts a helper that shares this process's memory and ends when this process does, so that
/// exiting leaves the address space's teardown to it (teardown.c). Call once, just before
/// exiting; -1 where no helper could be started (exiting then simply takes longer).
int lp_detach_teardown(void);

/// NULL when libunwind's remote unwinder loads (on first use), else the soname or symbol that
/// is missing: `--sample` refuses to start without it.
const char *_Nullable lp_unwind_library_missing(void);

// MARK: Prewarm hazard scan (prewarm.c)

/// A syscall stop as PTRACE_GET_SYSCALL_INFO describes it (x86_64 numbers).
typedef struct lp_syscall_stop {
    /// 1 entry, 2 exit, 3 seccomp, 0 not a syscall stop.
    int op;
    uint64_t nr;
    uint64_t args[6];
    int64_t rval;
} lp_syscall_stop;

/// PTRACE_GET_SYSCALL_INFO for a tracee in a syscall stop. Returns 0 or errno.
int lp_syscall_info(pid_t pid, lp_syscall_stop *_Nonnull stop);
// MARK: Uprobe perf events (perf_uprobe.c)

/// One uprobe hit read from a ring buffer (PERF_SAMPLE_IDENTIFIER | IP | TID | TIME).
typedef struct lp_perf_sample {
    /// The event's id (PERF_EVENT_IOC_ID), which tells the probes sharing one buffer apart.
    uint64_t id;
    uint64_t ip;
    uint32_t pid, tid;
    /// CLOCK_MONOTONIC ns (use_clockid).
    uint64_t time_ns;
} lp_perf_sample;

#define LP_RING_LOSS_WINDOWS 8

/// What a reader of one ring keeps between reads (`lp_perf_ring_read_raw`).
typedef struct lp_ring_reading {
    uint64_t repeat_ns;
    /// The ring's previous hit (or the end of its previous loss).
    uint64_t last_id, last_time_ns;
    uint32_t last_pid;
    /// Hits skipped as repeats, ever.
    uint64_t repeats;
    /// Loss windows found by the last read: CLOCK_MONOTONIC ns, and how many hits each lost.
    int windows;
    uint64_t loss_begin_ns[LP_RING_LOSS_WINDOWS], loss_end_ns[LP_RING_LOSS_WINDOWS], loss_count[LP_RING_LOSS_WINDOWS];
} lp_ring_reading;

/// Opens a uprobe on `path` at file `offset`, for the process `pid` (cpu -1: the breakpoint is
/// installed in its memory only), or for every process on `cpu` (pid -1: installed in every
/// process that maps the file), one sample per hit, timestamps in CLOCK_MONOTONIC. With `output_fd` >= 0 its samples go to that event's ring buffer
/// (PERF_EVENT_IOC_SET_OUTPUT). `*id` is its PERF_EVENT_IOC_ID. The event is enabled at once.
/// Returns 0 or errno. The corresponding C function is perf_event_open(2).
int lp_uprobe_open(pid_t pid, int cpu, uint32_t pmu_type, const char *_Nonnull path, uint64_t offset,
                   int output_fd, int *_Nonnull fd, uint64_t *_Nonnull id);
/// Maps the ring buffer of event `fd`: one header page and `data_pages` (a power of two) pages.
int lp_perf_ring_map(int fd, int data_pages, void *_Nullable *_Nonnull base, size_t *_Nonnull length);
void lp_perf_ring_unmap(void *_Nonnull base, size_t length);
/// Reads the records written so far, up to `capacity` samples into `samples` (`*count`; a full
/// `samples` leaves the rest for the next call), and adds the samples the kernel dropped for want
/// of room (PERF_RECORD_LOST) to `*lost`. Consumes what it reads.
int lp_perf_ring_read(void *_Nonnull base, size_t length, lp_perf_sample *_Nonnull samples,
                      int capacity, int *_Nonnull count, uint64_t *_Nonnull lost);
/// `lp_perf_ring_read`, and each sample's PERF_SAMPLE_RAW payload (a tracefs event's fetched
/// arguments): up to `raw_stride` bytes of it at raw + i * raw_stride (a longer one is cut
/// there), its length in raw_lengths[i] (0: the sample has none). Samples of events with and
/// without the payload may share the ring: a sample that ends at its time has none.
/// With `reading` (one per ring, kept across calls): a payload-less hit repeating the ring's
/// previous one (same event, same process, within `repeat_ns`) is skipped and counted in
/// `repeats`; each PERF_RECORD_LOST adds a loss window (from the ring's previous record to the
/// time the loss ended, with its count) — the caller empties `windows` after each call.
int lp_perf_ring_read_raw(void *_Nonnull base, size_t length, lp_perf_sample *_Nonnull samples, int capacity,
                          int *_Nonnull count, uint64_t *_Nonnull lost, uint8_t *_Nullable raw, size_t raw_stride,
                          uint32_t *_Nullable raw_lengths, struct lp_ring_reading *_Nullable reading);
/// Closes perf event descriptors without waiting for the kernel's release of their uprobes
/// (grace periods): a grandchild process holds the last references and closes them.
void lp_perf_release_in_background(const int *_Nonnull fds, int count);
/// The same, the grandchild named `name` (at most 15 bytes).
void lp_perf_release_in_background_named(const int *_Nonnull fds, int count, const char *_Nonnull name);
/// Opens a perf event on the tracefs uprobe event `tracepoint_id` (PERF_TYPE_TRACEPOINT), with the
/// same samples as `lp_uprobe_open`. Its uprobe is registered once per event, not per open.
int lp_tracepoint_probe_open(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd,
                             int *_Nonnull fd, uint64_t *_Nonnull id);
/// The same, each sample with the event's payload when `raw` (PERF_SAMPLE_RAW).
int lp_tracepoint_probe_open_raw(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd, int raw,
                                 int *_Nonnull fd, uint64_t *_Nonnull id);
/// Opens a counting-only perf event on the tracefs uprobe event `tracepoint_id` for the calling
/// process: it keeps the probe registered while the breakpoint traps in this process alone.
int lp_tracepoint_hold_open(uint64_t tracepoint_id, int *_Nonnull fd);
/// Names the calling thread (PR_SET_NAME; the process, when it is the main thread): the holder's
/// `lp-uprobe-hold`, `lp-uprobe-read`, `lp-uprobe-free`.
void lp_set_thread_name(const char *_Nonnull name);
/// A file without a name in `directory` (O_TMPFILE), open for writing, close-on-exec; it goes
/// with its last descriptor unless linked in. The descriptor, or -errno (EOPNOTSUPP, EISDIR:
/// a file system or kernel without O_TMPFILE).
int lp_open_unnamed_file(const char *_Nonnull directory, unsigned int mode);
/// Writes the file's dirty pages and waits for them, without a disk cache flush (sync_file_range):
/// the page cache drops clean pages only. 0 or an errno value.
int lp_write_back(int fd);
/// 1 when the file at `path` has file capabilities (a `security.capability` attribute).
int lp_has_file_capabilities(const char *_Nonnull path);
/// A ring buffer for every event of `cpu` to share (PERF_EVENT_IOC_SET_OUTPUT): a dummy software
/// event with the probes' sample format and clock, `data_pages` (a power of two) pages mapped,
/// whose descriptor polls readable once the ring is half full. 0 or an errno.
int lp_perf_ring_open(int cpu, int data_pages, int *_Nonnull fd, void *_Nullable *_Nonnull base,
                      size_t *_Nonnull length);
/// Functions launchprof probes in its own process to measure what one uprobe hit costs: one
/// whose first instruction the kernel emulates, one it single-steps.
uint64_t lp_uprobe_calibration_emulated(uint64_t x);
uint64_t lp_uprobe_calibration_stepped(uint64_t x);
/// Calls one of them `count` times; returns the elapsed CLOCK_MONOTONIC ns.
uint64_t lp_uprobe_calibration_loop(int stepped, int count);
/// What one ptrace stop costs a traced child here (ns, the lower quartile of `stops` int3 stops
/// of a forked child), 0 when it cannot be measured.
uint64_t lp_ptrace_stop_ns(int stops);
// Sampling (perf events) and offline unwinding: lp_sampling.h.
#include "lp_sampling.h"
// The scheduler's events for thread states: lp_sched_events.h.
#include "lp_sched_events.h"
// launchprof monitor's system-wide kernel events: lp_field.h.
#include "lp_field.h"
// The read loop every perf ring shares: lp_perf_ring.h.
#include "lp_perf_ring.h"

#endif
