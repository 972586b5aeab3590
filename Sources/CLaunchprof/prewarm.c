// The prewarm hazard scan's one request Swift cannot make: PTRACE_GET_SYSCALL_INFO, whose
// structure only <linux/ptrace.h> declares (it clashes with glibc's <sys/ptrace.h>).
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <linux/ptrace.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int lp_syscall_info(pid_t pid, lp_syscall_stop *stop) {
    struct ptrace_syscall_info info;
    memset(&info, 0, sizeof info);
    memset(stop, 0, sizeof *stop);
    if (syscall(SYS_ptrace, PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info) < 0) return errno;
    stop->op = info.op;
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
        stop->nr = info.entry.nr;
        for (int i = 0; i < 6; i++) stop->args[i] = info.entry.args[i];
    } else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
        stop->rval = info.exit.rval;
    } else if (info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
        stop->nr = info.seccomp.nr;
        for (int i = 0; i < 6; i++) stop->args[i] = info.seccomp.args[i];
    }
    return 0;
}
