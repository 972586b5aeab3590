/*
 * Reports how many CPUs it may run on, in its constructor and in main, and the CPU its
 * constructor ran on.
 * Truth: "cpus constructor-<count> t t", "cpus main-<count> t t" and "cpu constructor-<cpu> t t".
 */
#include "run-fixture.h"

#include <sched.h>
#include <stdio.h>

static void lp_report_cpus(const char *where) {
    cpu_set_t set;
    char count[16];
    snprintf(count, sizeof count, "%d", sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1);
    char name[64];
    snprintf(name, sizeof name, "%s-%s", where, count);
    uint64_t now = lp_now();
    lp_truth("cpus", name, now, now);
}

__attribute__((constructor)) static void lp_cpus_in_constructor(void) {
    lp_report_cpus("constructor");
    char name[32];
    snprintf(name, sizeof name, "constructor-%d", sched_getcpu());
    uint64_t now = lp_now();
    lp_truth("cpu", name, now, now);
}

int main(void) {
    lp_report_cpus("main");
    return 0;
}
