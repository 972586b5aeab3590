// Running a measurement ahead of the rest of a busy machine: calibrate's launches are what its
// fit is made of, and a compiler running beside them inflates some by 30-50% (a fit that then
// refuses itself, or stores the load). Scheduler autogroups (Debian's default) share the CPUs
// between sessions as equals and rank nice values only within one, so nice alone does nothing
// against another session's build: launchprof is run again in a session (autogroup) of its own,
// at nice -20 in both.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t high_priority_child;

static void forward(int signal) {
    if (high_priority_child > 0) kill(high_priority_child, signal);
}

int lp_rerun_at_high_priority(char *const *argv, const char *marker, int *wait_status) {
    if (getenv(marker)) return -1;  // this is the rerun
    // Only where permitted (root or CAP_SYS_NICE): elsewhere the caller goes on as it is.
    if (setpriority(PRIO_PROCESS, 0, -20) != 0) return -1;
    if (setenv(marker, "1", 1) != 0) return -1;
    // The terminal's Ctrl-C reaches this process only (the rerun has left its session): passed on.
    // Held until the child's pid is known, so that none is lost between fork and forwarding;
    // then unblocked, whatever mask launchprof was started with.
    lp_set_ending_signals_blocked(1);
    lp_handle_ending_signals(forward);
    pid_t pid = fork();
    if (pid < 0) {
        lp_handle_ending_signals(NULL);
        lp_set_ending_signals_blocked(0);
        unsetenv(marker);
        return -1;
    }
    if (pid == 0) {
        lp_handle_ending_signals(NULL);
        lp_set_ending_signals_blocked(0);
        setsid();
        int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            (void)!write(fd, "-20", 3);
            close(fd);
        }
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    high_priority_child = pid;
    lp_set_ending_signals_blocked(0);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    *wait_status = status;
    return 0;
}
