/*
 * A program linked against libchain1.so, which needs libchain2.so, which needs libchain3.so: the
 * loader runs their initializers in the order 3, 2, 1 (dependencies first), each stamping its
 * entry (run-chain-lib.c). main writes the truth of what the loader spent in each library
 * between two entries: "init libchain3.so <stamp3> <stamp2>" and
 * "init libchain2.so <stamp2> <stamp1>". Run bare, these are the libraries' loader.init as
 * they cost without launchprof.
 */
#include "run-fixture.h"

extern uint64_t lp_chain_stamp_1, lp_chain_stamp_2, lp_chain_stamp_3;

int main(void) {
    int truth = lp_truth_open();
    lp_truth_write(truth, "init", "libchain3.so", lp_chain_stamp_3, lp_chain_stamp_2);
    lp_truth_write(truth, "init", "libchain2.so", lp_chain_stamp_2, lp_chain_stamp_1);
    if (truth >= 0) close(truth);
    return 0;
}
