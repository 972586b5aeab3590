/*
 * Spins in `main` for ever, re-entering main's first instructions at every turn: the worst case
 * for the uprobe observer, whose probe on main then fires every microsecond or two (the first hit
 * is the boundary; the flood must not push the launch's earlier hits out of any buffer), and a
 * program only a timeout or a signal ends. Its first pass writes the truth of main (fixture's
 * own clock, read right after main's first instructions) before it loops; with
 * LP_FIXTURE_TRUTH naming a FIFO, opening it also tells a test that the program is in main.
 * Truth: "main - t t".
 */
#include "run-fixture.h"

__attribute__((used)) volatile int lp_spin_entered;

__attribute__((used, noinline)) void lp_spin_record_main(void) {
    uint64_t now = lp_now();
    lp_truth("main", "-", now, now);
}

/* Eight bytes of nops first (where a ptrace breakpoint goes; a uprobe is placed after them, on
 * the ninth, see ProbePlacement), then the loop back to main itself. At entry the stack is 8
 * bytes off 16-byte alignment: the call is made with it aligned. */
__attribute__((naked)) int main(void) {
    __asm__ volatile(
        ".rept 9\n\tnop\n\t.endr\n\t"
        "cmpl $0, lp_spin_entered(%rip)\n\t"
        "jne main\n\t"
        "movl $1, lp_spin_entered(%rip)\n\t"
        "subq $8, %rsp\n\t"
        "call lp_spin_record_main\n\t"
        "addq $8, %rsp\n\t"
        "jmp main\n\t");
}
