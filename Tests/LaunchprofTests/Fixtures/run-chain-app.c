/*
 * A program linked against libchain1.so, which needs libchain2.so, … libchain4.so: the loader
 * runs their initializers in the order 4, 3, 2, 1 (dependencies first), each stamping its entry
 * (run-chain-lib.c). main writes the truth of what the loader spent in a library between two
 * entries: "init libchain3.so <stamp3> <stamp2>" and "init libchain2.so <stamp2> <stamp1>". Run
 * bare, these are the libraries' loader.init as they cost without launchprof. libchain4.so makes
 * the process's first clock read (its vDSO page fault, which would fall before a stamp) and
 * libchain1.so's span ends at the program's initializer: neither is measured.
 */
#include "run-fixture.h"

extern uint64_t lp_chain_stamp_1, lp_chain_stamp_2, lp_chain_stamp_3, lp_chain_stamp_4;

int main(void) {
    int truth = lp_truth_open();
    (void)lp_chain_stamp_4;
    lp_truth_write(truth, "init", "libchain3.so", lp_chain_stamp_3, lp_chain_stamp_2);
    lp_truth_write(truth, "init", "libchain2.so", lp_chain_stamp_2, lp_chain_stamp_1);
    if (truth >= 0) close(truth);
    return 0;
}
