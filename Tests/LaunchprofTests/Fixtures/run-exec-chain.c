/*
 * An exec chain: image i does LP_IMAGE_BUSY_US of work in main, then execs itself with i + 1
 * until i == LP_EXEC_COUNT (default 2), where it execs LP_EXEC_FINAL (a path, with no arguments)
 * if set, or exits LP_EXIT_CODE. The image index travels in argv[1].
 * Truth: "exec <i> <main-ns> <ns-before-execve-or-exit>", and "main <i> t t" per image.
 */
#include "run-fixture.h"

#include <stdio.h>

int main(int argc, char **argv) {
    uint64_t main_ns = lp_now();
    int image = argc > 1 ? atoi(argv[1]) : 0;
    char name[16];
    snprintf(name, sizeof name, "%d", image);
    lp_truth("main", name, main_ns, main_ns);
    lp_busy_us(lp_setting("LP_IMAGE_BUSY_US", 500));
    int count = (int)lp_setting("LP_EXEC_COUNT", 2);
    int truth = lp_truth_open();
    if (image < count) {
        char next[16];
        snprintf(next, sizeof next, "%d", image + 1);
        char *arguments[] = {argv[0], next, NULL};
        lp_truth_write(truth, "exec", name, main_ns, lp_now());
        execv("/proc/self/exe", arguments);
        return 127;
    }
    const char *final = getenv("LP_EXEC_FINAL");
    if (final != NULL && *final != '\0') {
        char *arguments[] = {(char *)final, NULL};
        lp_truth_write(truth, "exec", name, main_ns, lp_now());
        execv(final, arguments);
        return 127;
    }
    lp_truth_write(truth, "exec", name, main_ns, lp_now());
    return (int)lp_setting("LP_EXIT_CODE", 0);
}
