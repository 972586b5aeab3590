/*
 * Dies of SIGSEGV in its own constructor, after LP_PROGRAM_BUSY_US of work: main is never
 * reached. (A library whose constructor crashes: run-lib.c with LP_CTOR_<name>_CRASH=1.)
 * Truth: "crash program b e" just before the fault.
 */
#include "run-fixture.h"

__attribute__((constructor)) static void lp_crashing_constructor(void) {
    uint64_t begin = lp_now();
    lp_work("LP_PROGRAM", 0, 0);
    lp_truth("crash", "program", begin, lp_now());
    volatile int *nowhere = (volatile int *)(uintptr_t)lp_setting("LP_NULL", 0);
    *nowhere = 1;
}

int main(void) {
    lp_truth("main", "-", lp_now(), lp_now());
    return 0;
}
