/*
 * Built with -static: no dynamic loader, so no loader phases. Its constructor and main do
 * LP_PROGRAM_BUSY_US / LP_MAIN_BUSY_US of work; exits LP_EXIT_CODE.
 * Truth: "ctor program b e", "main - t t", "exit - t t".
 */
#include "run-fixture.h"

/* The constructor's span is written from main, so no file I/O lands inside program.init. */
static uint64_t constructor_begin, constructor_end;

__attribute__((constructor)) static void lp_static_constructor(void) {
    constructor_begin = lp_now();
    lp_work("LP_PROGRAM", 0, 0);
    constructor_end = lp_now();
}

int main(void) {
    uint64_t now = lp_now();
    lp_truth("ctor", "program", constructor_begin, constructor_end);
    lp_truth("main", "-", now, now);
    lp_busy_us(lp_setting("LP_MAIN_BUSY_US", 0));
    now = lp_now();
    lp_truth("exit", "-", now, now);
    return (int)lp_setting("LP_EXIT_CODE", 0);
}
