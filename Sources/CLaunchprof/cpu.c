// The processor's brand string from CPUID, the text the kernel prints as /proc/cpuinfo's
// "model name": generating /proc/cpuinfo asks every CPU for its current frequency, which costs
// more than a small `inspect` (which names its stored calibration by the CPU model).
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int lp_cpu_brand(char *out, size_t capacity) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned int words[12];
    if (capacity < sizeof words + 1 || __get_cpuid_max(0x80000000, 0) < 0x80000004) return -1;
    for (unsigned int leaf = 0; leaf < 3; leaf++) {
        unsigned int *w = words + 4 * leaf;
        __get_cpuid(0x80000002 + leaf, &w[0], &w[1], &w[2], &w[3]);
    }
    // The kernel strips the padding on both sides.
    const char *start = (const char *)words, *end = start + sizeof words;
    while (start < end && (*start == ' ' || *start == '\0')) start++;
    while (end > start && (end[-1] == ' ' || end[-1] == '\0')) end--;
    size_t length = (size_t)(end - start);
    if (length == 0 || memchr(start, '\0', length)) return -1;
    memcpy(out, start, length);
    out[length] = '\0';
    return 0;
#else
    (void)out;
    (void)capacity;
    return -1;
#endif
}

int lp_thread_attr_other_cpu(void *attributes) {
    cpu_set_t allowed;
    int current = sched_getcpu();
    if (current < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    CPU_CLR(current, &allowed);
    if (CPU_COUNT(&allowed) == 0) return -1;
    return pthread_attr_setaffinity_np((pthread_attr_t *)attributes, sizeof allowed, &allowed) == 0 ? current : -1;
}

int lp_pin_self(int cpu, lp_cpu_mask *saved) {
    cpu_set_t only;
    if (sched_getaffinity(0, sizeof(cpu_set_t), (cpu_set_t *)saved->bits) != 0) return -1;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    return sched_setaffinity(0, sizeof only, &only);
}

void lp_restore_affinity(const lp_cpu_mask *saved) {
    sched_setaffinity(0, sizeof(cpu_set_t), (const cpu_set_t *)saved->bits);
}

int lp_allowed_cpus(int *out, int capacity) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < capacity; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) out[count++] = cpu;
    }
    return count;
}

int lp_allowed_cpu_count(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
    return CPU_COUNT(&allowed);
}
