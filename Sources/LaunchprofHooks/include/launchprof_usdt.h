/*
 * launchprof_usdt.h: the USDT probes of launchprof.h as functions with external linkage, for
 * languages that import C declarations but not inline assembly (LaunchprofApp, in Swift, speaks
 * the hook channel itself and fires the probes through these). C and C++ apps include
 * launchprof.h instead, whose hooks fire the same probes.
 */
#ifndef LAUNCHPROF_USDT_H
#define LAUNCHPROF_USDT_H

#ifdef __cplusplus
extern "C" {
#endif

void launchprof_usdt_fire_begin(const char *phase);
void launchprof_usdt_fire_end(const char *phase);
void launchprof_usdt_fire_first_frame(void);
void launchprof_usdt_fire_extend(const char *task_id);
void launchprof_usdt_fire_finish_extend(const char *task_id);

#ifdef __cplusplus
}
#endif

#endif /* LAUNCHPROF_USDT_H */
