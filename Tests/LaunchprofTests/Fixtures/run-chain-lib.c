/*
 * A library of a dependency chain whose only initializer stamps its own entry: built with
 * -nostartfiles (no crti _init, no crtbegin frame_dummy), so the constructor below is the
 * object's first and only initializer, the function the loader calls and launchprof observes.
 * Built with -DLP_CHAIN_NAME=<n> into libchain<n>.so. The stamp is read by run-chain-app.c's
 * main, which writes the truth: a library's loader.init, bare, is the time from its stamp to the
 * next object's.
 */
#include <stdint.h>
#include <time.h>

#ifndef LP_CHAIN_NAME
#error "build with -DLP_CHAIN_NAME=<n>"
#endif
#define LP_CONCAT2(a, b) a##b
#define LP_CONCAT(a, b) LP_CONCAT2(a, b)

uint64_t LP_CONCAT(lp_chain_stamp_, LP_CHAIN_NAME);

__attribute__((noinline)) static void lp_chain_stamp(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    LP_CONCAT(lp_chain_stamp_, LP_CHAIN_NAME) = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Its first instructions are `push %rbp; mov %rsp,%rbp; call`: launchprof's probe lands on the
 * call, which the kernel emulates, as it lands on the `je` of gcc's own initializers. */
__attribute__((constructor)) static void lp_chain_constructor(void) {
    lp_chain_stamp();
    __asm__ volatile("" ::: "memory");
}
