/*
 * Forks in its constructor, the first code of its own that runs, and exits at once: the fork
 * lives LP_DAEMON_US (default 3 s, bounded so a test that fails cannot leave it for long) unless
 * killed. The constructor goes on only once the fork has written its truth line.
 * Truth: "ctor program b e" around the fork, "daemon <pid> t t" from the fork, "main - t t".
 */
#include "run-fixture.h"

#include <stdio.h>

__attribute__((constructor)) static void lp_fork_at_once(void) {
    uint64_t begin = lp_now();
    int gate[2];
    if (pipe(gate) != 0) {
        _exit(2);
    }
    pid_t forked = fork();
    if (forked < 0) {
        _exit(2);
    }
    if (forked == 0) {
        char name[24];
        snprintf(name, sizeof name, "%d", (int)getpid());
        uint64_t now = lp_now();
        lp_truth("daemon", name, now, now);
        close(gate[0]);
        (void)!write(gate[1], "", 1);
        close(gate[1]);
        lp_blocking_us(lp_setting("LP_DAEMON_US", 3000000));
        _exit(0);
    }
    close(gate[1]);
    char byte;
    (void)!read(gate[0], &byte, 1);
    close(gate[0]);
    lp_truth("ctor", "program", begin, lp_now());
}

int main(void) {
    uint64_t now = lp_now();
    lp_truth("main", "-", now, now);
    return 0;
}
