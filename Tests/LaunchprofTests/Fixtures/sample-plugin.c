/* A library the sampler's fixture dlopen's during didFinishLaunching. */
#include <stdint.h>
#include <time.h>

static uint64_t thread_cpu(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

volatile uint64_t plugin_sink;

__attribute__((noinline)) void plugin_work(uint64_t us) {
    uint64_t start = thread_cpu(), x = plugin_sink;
    while (thread_cpu() - start < us * 1000) {
        for (int i = 0; i < 50000; i++) x = x * 2862933555777941757u + 3037000493u;
    }
    plugin_sink = x;
}
