// Exiting without waiting for the address space to be torn down: a process that mapped a
// program's whole closure (inspect maps ~60 files) spends most of a millisecond in exit_group
// unmapping them before its parent sees it end. A helper process sharing the address space
// holds it, so the exiting process drops only a reference; the helper dies with it
// (PR_SET_PDEATHSIG) and the kernel tears the mappings down then, off the caller's path.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// The helper runs on this stack, in the exiting process's memory, with the exiting thread's
// TLS pointer (no CLONE_SETTLS): raw system calls only, nothing that touches errno or locks.
static char holder_stack[16384] __attribute__((aligned(64)));

static long raw_syscall1(long number, long a) {
    long result;
    __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a) : "rcx", "r11", "memory");
    return result;
}

static long raw_syscall3(long number, long a, long b, long c) {
    long result;
    __asm__ volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return result;
}

static int holder_main(void *argument) {
    long parent = (long)(intptr_t)argument;
    // Its copy of the descriptor table would keep pipes open (a shell reading launchprof's
    // output would wait for it): close them all.
    raw_syscall3(SYS_close_range, 0, ~0L, 0);
    raw_syscall3(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0);
    // The parent may have ended before the death signal was armed.
    if (raw_syscall1(SYS_getppid, 0) != parent) raw_syscall1(SYS_exit, 0);
    for (;;) raw_syscall1(SYS_pause, 0);
    return 0;
}

int lp_detach_teardown(void) {
#if defined(__x86_64__)
    sigset_t all, previous;
    sigfillset(&all);
    // The helper starts with this mask: no handler of launchprof's may run on its stack.
    if (sigprocmask(SIG_SETMASK, &all, &previous) != 0) return -1;
    pid_t self = getpid();
    int child = clone(holder_main, holder_stack + sizeof holder_stack, CLONE_VM | SIGCHLD, (void *)(intptr_t)self);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return child > 0 ? 0 : -1;
#else
    return -1;
#endif
}
