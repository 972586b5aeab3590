// The Swift demo's pre-main work: a C constructor standing in for the frameworks and static
// initializers a real app runs before main (Swift has no constructors of its own).
#ifndef LAUNCHPROF_DEMO_SUPPORT_H
#define LAUNCHPROF_DEMO_SUPPORT_H
/// Nanoseconds the constructor worked (LAUNCHPROF_DEMO_INIT_US, default 20000).
unsigned long long lp_demo_init_ns(void);
#endif
