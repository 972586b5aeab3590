// The sampler's C++ fixture: layout::Engine::compute(int) computes for LP_SAMPLE_CPU_US of CPU
// time (default 80 ms) in didFinishLaunching; its flag must carry the demangled name.
#include "launchprof.h"
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t thread_cpu() {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

volatile uint64_t sink;

namespace layout {
struct Engine {
    uint64_t compute(int scale);
};

__attribute__((noinline)) uint64_t Engine::compute(int scale) {
    const char *text = getenv("LP_SAMPLE_CPU_US");
    uint64_t us = text ? strtoull(text, nullptr, 10) : 80000;
    uint64_t start = thread_cpu(), x = sink;
    while (thread_cpu() - start < us * 1000) {
        for (int i = 0; i < 50000 * scale; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    }
    return x;
}
}  // namespace layout

int main() {
    launchprof_begin("didFinishLaunching");
    sink = layout::Engine().compute(1);
    launchprof_end("didFinishLaunching");
    launchprof_first_frame();
    return 0;
}
