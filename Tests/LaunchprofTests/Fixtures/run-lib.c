/*
 * A shared library whose constructor does configurable work. Built once per name (letters,
 * digits, _) with -DLP_LIB_NAME=<name> into lib<name>.so; the work is LP_CTOR_<name>_BUSY_US and
 * LP_CTOR_<name>_SLEEP_US (defaults 0), and LP_CTOR_<name>_CRASH=1 makes the constructor die of
 * SIGSEGV. LP_CTOR_<name>_DLOPEN=<path> makes the constructor dlopen that path (a load nested in
 * another's initialisation), and lp_lib_dlopen_<name>(path) loads one from the library's own code.
 * Truth: "ctor lib<name>.so <begin> <end>".
 */
#include "run-fixture.h"

#include <dlfcn.h>
#include <signal.h>

#ifndef LP_LIB_NAME
#error "build with -DLP_LIB_NAME=<name>"
#endif
#define LP_STRING2(x) #x
#define LP_STRING(x) LP_STRING2(x)
#define LP_CONCAT2(a, b) a##b
#define LP_CONCAT(a, b) LP_CONCAT2(a, b)

/* Programs call this so the linker keeps the DT_NEEDED entry. */
int LP_CONCAT(lp_lib_, LP_LIB_NAME)(void) { return 1; }

/* A dlopen whose caller is this library. */
void *LP_CONCAT(lp_lib_dlopen_, LP_LIB_NAME)(const char *path) { return dlopen(path, RTLD_NOW); }

__attribute__((constructor)) static void lp_library_constructor(void) {
    int truth = lp_truth_open();
    uint64_t begin = lp_now();
    lp_work("LP_CTOR_" LP_STRING(LP_LIB_NAME), 0, 0);
    const char *load = getenv("LP_CTOR_" LP_STRING(LP_LIB_NAME) "_DLOPEN");
    if (load && *load) {
        dlopen(load, RTLD_NOW);
    }
    if (lp_setting("LP_CTOR_" LP_STRING(LP_LIB_NAME) "_CRASH", 0) == 1) {
        lp_truth_write(truth, "crash", "lib" LP_STRING(LP_LIB_NAME) ".so", begin, lp_now());
        /* A real fault, not raise(): the tracer sees what a bug would produce. */
        volatile int *nowhere = (volatile int *)(uintptr_t)lp_setting("LP_NULL", 0);
        *nowhere = 1;
    }
    uint64_t end = lp_now();
    lp_truth_write(truth, "ctor", "lib" LP_STRING(LP_LIB_NAME) ".so", begin, end);
    if (truth >= 0) {
        close(truth);
    }
}
