/*
 * Loads libraries with dlopen after main: LP_DLOPEN_DELAY_US of busy work in main first, then
 * dlopen of each path in LP_DLOPEN (colon-separated). Truth: "main main <t> <t>", then per library
 * "dlopen <name> <begin> <end>" around the dlopen call.
 */
#include "run-fixture.h"
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    lp_busy_us(lp_setting("LP_DLOPEN_DELAY_US", 10000));
    const char *list = getenv("LP_DLOPEN");
    char buffer[4096];
    snprintf(buffer, sizeof buffer, "%s", list ? list : "");
    for (char *save = NULL, *path = strtok_r(buffer, ":", &save); path; path = strtok_r(NULL, ":", &save)) {
        int truth = lp_truth_open();
        uint64_t begin = lp_now();
        void *handle = dlopen(path, RTLD_NOW);
        uint64_t end = lp_now();
        const char *slash = strrchr(path, '/');
        lp_truth_write(truth, handle ? "dlopen" : "dlopen-failed", slash ? slash + 1 : path, begin, end);
        if (truth >= 0) close(truth);
    }
    uint64_t done = lp_now();
    lp_truth("exit", "exit", done, done);
    return 0;
}
