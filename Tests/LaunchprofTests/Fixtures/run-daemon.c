/*
 * Forks a daemon (fork, setsid, fork) that lives LP_DAEMON_US (default 3 s, bounded so a test
 * that fails cannot leave it for long), then exits 0 at once.
 * Truth: "daemon <pid> <ns> <ns>" from the daemon, and "exit - t t" from the parent.
 */
#include "run-fixture.h"

#include <stdio.h>
#include <sys/wait.h>

int main(void) {
    int gate[2];
    if (pipe(gate) != 0) {
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        return 2;
    }
    if (child == 0) {
        setsid();
        pid_t daemon = fork();
        if (daemon != 0) {
            _exit(daemon < 0 ? 2 : 0);
        }
        char name[24];
        snprintf(name, sizeof name, "%d", (int)getpid());
        uint64_t now = lp_now();
        lp_truth("daemon", name, now, now);
        /* Tell the parent the daemon exists (its pid is in the truth file) before it exits. */
        close(gate[0]);
        (void)!write(gate[1], "", 1);
        close(gate[1]);
        for (int fd = 0; fd < 3; fd++) {
            close(fd);
        }
        lp_blocking_us(lp_setting("LP_DAEMON_US", 3000000));
        _exit(0);
    }
    close(gate[1]);
    char byte;
    (void)!read(gate[0], &byte, 1);
    waitpid(child, NULL, 0);
    uint64_t now = lp_now();
    lp_truth("exit", "-", now, now);
    return 0;
}
