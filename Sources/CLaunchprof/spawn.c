// Process creation: the only code that runs between fork and exec.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

// A filter that lets every system call through except listen(2), which it hands to the tracer.
static int trap_listen_calls(void) {
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_listen, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog filter = {sizeof program / sizeof program[0], program};
    // Without CAP_SYS_ADMIN a filter needs no_new_privs (set-user-ID bits stop working).
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) == 0) return 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter);
}

// Signals whose disposition is not SIG_DFL in launchprof (handled or ignored), found once by
// lp_spawn_prepare so that the child resets just those instead of querying all 64 per spawn.
static sigset_t non_default_signals;
static bool non_default_signals_known;

void lp_spawn_prepare(void) {
    sigemptyset(&non_default_signals);
    for (int s = 1; s < NSIG; s++) {
        struct sigaction current;
        if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &current) != 0) continue;
        if (current.sa_handler != SIG_DFL) sigaddset(&non_default_signals, s);
    }
    non_default_signals_known = true;
}

// The child shares the parent's memory (vfork), so it reports a failed exec by writing here
// before _exit; the parent reads it once vfork returns. Only async-signal-safe calls below.
static void run_child(const char *path, char *const *argv, char *const *envp,
                      const lp_spawn_options *o, bool pin, volatile int *child_errno) {
    // Dispositions launchprof set (handlers, SIG_IGN) must not reach the program, nor may one
    // of its handlers run here on the shared stack once the mask is cleared.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++) {
        if (s == SIGKILL || s == SIGSTOP) continue;
        if (non_default_signals_known && !sigismember(&non_default_signals, s)) continue;
        sigaction(s, &dfl, NULL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);

    if (o->new_process_group) setpgid(0, 0);
    // If launchprof dies before it sets PTRACE_O_EXITKILL, the child dies with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    int fds[3] = {o->stdin_fd, o->stdout_fd, o->stderr_fd};
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0 && fds[i] != i && dup2(fds[i], i) < 0) goto fail;
    }
    if (o->keep_fd == LP_CHILD_HOOK_FD) {
        int flags = fcntl(o->keep_fd, F_GETFD);
        if (flags < 0 || fcntl(o->keep_fd, F_SETFD, flags & ~FD_CLOEXEC) < 0) goto fail;
    } else if (o->keep_fd >= 0) {
        // dup2's copy is not close-on-exec; whatever the child held at that number is replaced.
        if (dup2(o->keep_fd, LP_CHILD_HOOK_FD) < 0) goto fail;
    }
    if (o->cwd && chdir(o->cwd) < 0) goto fail;
    if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o->cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    } else if (o->cpu == LP_SPAWN_CPU_LAUNCHPROFS) {
        lp_affinity_restore(0);  // the spawning thread is pinned; the child must not be
    }
    if (o->trace && ptrace(PTRACE_TRACEME, 0, 0, 0) < 0) goto fail;
    if (o->trap_listen && trap_listen_calls() < 0) goto fail;
    execve(path, argv, envp);
fail:
    *child_errno = errno ? errno : EINVAL;
    _exit(127);
}

int lp_spawn(const char *path, char *const *argv, char *const *envp,
             const lp_spawn_options *options, pid_t *pid) {
    // Block every signal so no handler of launchprof's runs on the shared stack in the child.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    volatile int child_errno = 0;
    // A child of a thread pinned to that CPU already has that mask (vfork copies the thread's).
    bool pin = options->cpu >= 0 && options->cpu != lp_thread_pinned_cpu();
    pid_t child = vfork();
    if (child == 0) {
        run_child(path, argv, envp, options, pin, &child_errno);
    }
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (child < 0) return fork_errno;
    if (child_errno != 0) {
        int status;
        while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {}
        return child_errno;
    }
    *pid = child;
    return 0;
}
