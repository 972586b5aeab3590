// ptrace, waiting, and memory access for the tracer. All calls come from the tracer's thread.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

uint64_t lp_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int lp_pipe(int fds[2], bool nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) == 0 ? 0 : errno;
}

int lp_pidfd_open(pid_t pid, int *fd) {
    int result = (int)syscall(SYS_pidfd_open, pid, 0);
    if (result < 0) return errno;
    *fd = result;
    return 0;
}

int lp_ptrace(int request, pid_t pid, uintptr_t addr, uintptr_t data, long *result) {
    errno = 0;
    long value = ptrace((enum __ptrace_request)request, pid, (void *)addr, (void *)data);
    if (value == -1 && errno != 0) return errno;
    if (result) *result = value;
    return 0;
}

int lp_wait(pid_t pid, bool nohang, lp_wait_result *r) {
    int status = 0;
    struct rusage usage;
    pid_t got;
    do {
        got = wait4(pid, &status, __WALL | __WNOTHREAD | (nohang ? WNOHANG : 0), &usage);
    } while (got < 0 && errno == EINTR);
    if (got < 0) return errno;
    memset(r, 0, sizeof *r);
    r->at_ns = lp_now_ns();
    r->pid = got;
    if (got == 0) return 0;  // WNOHANG, nothing yet
    if (WIFEXITED(status)) {
        r->kind = LP_WAIT_EXITED;
        r->value = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r->kind = LP_WAIT_SIGNALED;
        r->value = WTERMSIG(status);
        r->core_dumped = WCOREDUMP(status);
    } else {
        r->kind = LP_WAIT_STOPPED;
        r->value = WSTOPSIG(status);
        r->event = (status >> 16) & 0xff;
        return 0;
    }
    r->major_faults = (uint64_t)usage.ru_majflt;
    r->minor_faults = (uint64_t)usage.ru_minflt;
    return 0;
}

int lp_read_memory(pid_t pid, uint64_t address, void *buffer, size_t length) {
    struct iovec local = {buffer, length};
    struct iovec remote = {(void *)(uintptr_t)address, length};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0) return errno;
    return (size_t)n == length ? 0 : EIO;
}

int lp_read_blocks(pid_t pid, const uint64_t *addresses, size_t block_size, void *blocks, int count) {
    enum { batch = 64 };  /* well under IOV_MAX */
    for (int start = 0; start < count; start += batch) {
        int n = count - start < batch ? count - start : batch;
        struct iovec local[batch], remote[batch];
        for (int i = 0; i < n; i++) {
            local[i] = (struct iovec){(char *)blocks + (size_t)(start + i) * block_size, block_size};
            remote[i] = (struct iovec){(void *)(uintptr_t)addresses[start + i], block_size};
        }
        ssize_t got = process_vm_readv(pid, local, n, remote, n, 0);
        if (got < 0) return errno;
        if (got != (ssize_t)(n * block_size)) return EIO;
    }
    return 0;
}

int lp_read_words(pid_t pid, const uint64_t *addresses, uint64_t *words, int count) {
    return lp_read_blocks(pid, addresses, 8, words, count);
}

int lp_get_registers(pid_t pid, lp_registers *out) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) return errno;
    out->pc = regs.rip;
    out->sp = regs.rsp;
    out->arg0 = regs.rdi;
    out->arg1 = regs.rsi;
    out->arg2 = regs.rdx;
    out->ret = regs.rax;
    return 0;
#else
    (void)pid; (void)out;
    return ENOSYS;
#endif
}

int lp_set_pc(pid_t pid, uint64_t pc) {
#if defined(__x86_64__)
    if (ptrace(PTRACE_POKEUSER, pid, (void *)offsetof(struct user_regs_struct, rip),
               (void *)(uintptr_t)pc) < 0)
        return errno;
    return 0;
#else
    (void)pid; (void)pc;
    return ENOSYS;
#endif
}

int lp_insert_breakpoint(pid_t pid, uint64_t address, uint8_t *original) {
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)address, 0);
    if (word == -1 && errno) return errno;
    *original = (uint8_t)(word & 0xff);
    long patched = (word & ~0xffL) | 0xcc;
    if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)address, (void *)patched) < 0) return errno;
    return 0;
}

int lp_poke_word(pid_t pid, uint64_t address, uint64_t word) {
    if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)address, (void *)(uintptr_t)word) < 0) return errno;
    return 0;
}

int lp_remove_breakpoint(pid_t pid, uint64_t address, uint8_t original) {
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)address, 0);
    if (word == -1 && errno) return errno;
    long restored = (word & ~0xffL) | original;
    if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)address, (void *)restored) < 0)
        return errno;
    return 0;
}

static cpu_set_t saved_affinity;
static bool saved_affinity_valid;

void lp_affinity_save(void) {
    saved_affinity_valid = sched_getaffinity(0, sizeof saved_affinity, &saved_affinity) == 0;
}

// The CPU the calling thread pinned itself to with lp_pin (-1: none). Only lp_pin writes it: a
// vfork child shares this memory, and its own affinity changes are not the thread's.
static __thread int thread_pinned_cpu = -1;

int lp_pin(pid_t tid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(tid, sizeof set, &set) < 0) return errno;
    if (tid == 0) thread_pinned_cpu = cpu;
    return 0;
}

int lp_thread_pinned_cpu(void) { return thread_pinned_cpu; }

int lp_affinity_restore(pid_t tid) {
    if (!saved_affinity_valid) return 0;
    return sched_setaffinity(tid, sizeof saved_affinity, &saved_affinity) < 0 ? errno : 0;
}

int lp_current_cpu(void) { return sched_getcpu(); }

int lp_cont_then_unpin(pid_t pid, int signal) {
    // Woken while still pinned, the child is queued on this CPU, where its exec just ran,
    // instead of on an idle one away from those caches. While its mask is still narrow it must
    // not run: a real-time policy keeps the woken child from preempting this thread until the
    // mask is restored. Where that policy is not permitted, the mask is restored first.
    int policy;
    struct sched_param saved;
    bool raised = false;
    if (pthread_getschedparam(pthread_self(), &policy, &saved) == 0 && policy != SCHED_FIFO && policy != SCHED_RR) {
        struct sched_param realtime = {.sched_priority = 1};
        raised = pthread_setschedparam(pthread_self(), SCHED_FIFO, &realtime) == 0;
    }
    if (!raised) {
        lp_affinity_restore(pid);
        return ptrace(PTRACE_CONT, pid, 0, (void *)(intptr_t)signal) < 0 ? errno : 0;
    }
    int result = ptrace(PTRACE_CONT, pid, 0, (void *)(intptr_t)signal) < 0 ? errno : 0;
    lp_affinity_restore(pid);
    pthread_setschedparam(pthread_self(), policy, &saved);
    return result;
}

// What one ptrace stop costs a traced child on this host, for choosing the observer (a uprobe
// hit's cost is measured beside it): a child stops at `stops` int3s, timing each itself (trap,
// waking this thread, PTRACE_CONT, waking it again: all it loses), while this thread waits and
// continues it. The lower quartile: the stops the rest of a loaded machine disturbed least, as
// the uprobe hits are timed. Returns 0 when it cannot measure. Tracked for Ctrl-C, always reaped.
static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t lp_ptrace_stop_ns(int stops) {
    if (stops <= 0 || stops > 1024) return 0;
    size_t size = sizeof(uint64_t) * (size_t)stops;
    uint64_t *lost = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (lost == MAP_FAILED) return 0;
    pid_t child = fork();
    if (child < 0) {
        munmap(lost, size);
        return 0;
    }
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(1);
        raise(SIGSTOP);
        for (int i = 0; i < stops; i++) {
            uint64_t before = lp_now_ns();
            __asm__ volatile("int3");
            lost[i] = lp_now_ns() - before;
        }
        _exit(0);
    }
    lp_track_child(child);
    int status = 0, seen = 0, ok = 1;
    for (;;) {
        if (waitpid(child, &status, __WALL) != child) {
            if (errno == EINTR) continue;
            kill(child, SIGKILL);
            waitpid(child, &status, __WALL);
            ok = 0;
            break;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        if (!WIFSTOPPED(status)) continue;
        int signal = WSTOPSIG(status);
        if (signal == SIGTRAP) seen++;
        else if (signal != SIGSTOP) ok = 0;
        if (ptrace(PTRACE_CONT, child, 0, signal == SIGTRAP || signal == SIGSTOP ? 0 : signal) != 0) {
            kill(child, SIGKILL);
            ok = 0;
        }
    }
    lp_untrack_child(child);
    uint64_t result = 0;
    if (ok && seen == stops && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        qsort(lost, (size_t)stops, sizeof *lost, compare_u64);
        result = lost[stops / 4];
    }
    munmap(lost, size);
    return result;
}
