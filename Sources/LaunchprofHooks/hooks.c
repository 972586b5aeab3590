// The hooks are header-only (launchprof.h); this file gives their USDT probes external linkage
// for LaunchprofApp (launchprof_usdt.h): one probe site each, here.
#include "launchprof.h"
#include "launchprof_usdt.h"

void launchprof_usdt_fire_begin(const char *phase) { launchprof_usdt_begin(phase); }
void launchprof_usdt_fire_end(const char *phase) { launchprof_usdt_end(phase); }
void launchprof_usdt_fire_first_frame(void) { launchprof_usdt_first_frame(); }
void launchprof_usdt_fire_extend(const char *task_id) { launchprof_usdt_extend(task_id); }
void launchprof_usdt_fire_finish_extend(const char *task_id) { launchprof_usdt_finish_extend(task_id); }
