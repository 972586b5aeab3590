/*
 * dlopen calls from three places, for the caller each dlopen phase names: main itself loads
 * LP_DLOPEN_DIRECT, then liblpdlvia.so (linked in) loads LP_DLOPEN_VIA from its own code; a
 * library so loaded may load another from its constructor (run-lib.c's LP_CTOR_<name>_DLOPEN).
 * Truth: "dlopen <name> <begin> <end>" around each call made here.
 */
#include "run-fixture.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *lp_lib_dlopen_lpdlvia(const char *path);

static void load(const char *path, int through_library) {
    if (!path || !*path) return;
    int truth = lp_truth_open();
    uint64_t begin = lp_now();
    void *handle = through_library ? lp_lib_dlopen_lpdlvia(path) : dlopen(path, RTLD_NOW);
    uint64_t end = lp_now();
    const char *slash = strrchr(path, '/');
    lp_truth_write(truth, handle ? "dlopen" : "dlopen-failed", slash ? slash + 1 : path, begin, end);
    if (truth >= 0) close(truth);
}

int main(void) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    load(getenv("LP_DLOPEN_DIRECT"), 0);
    load(getenv("LP_DLOPEN_VIA"), 1);
    return 0;
}
