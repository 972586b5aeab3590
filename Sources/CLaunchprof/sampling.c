// Sampling with perf events (the ring buffer needs memory barriers) and offline unwinding of
// the frames launchprof's call frame rules cannot take (LaunchprofELF's CallFrameTable) with
// libunwind (its API is macro-named and its accessors are C callbacks).
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "unwind_library.h"

// MARK: perf events

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags) {
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

// AX BX CX DX SI DI BP SP IP and R8-R15 (PERF_REG_X86_*: 0-8, 16-23).
static const uint64_t register_mask = 0x1ffULL | (0xffULL << 16);

static void stack_attr(struct perf_event_attr *attr, const lp_perf_options *options) {
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME
        | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr->sample_regs_user = register_mask;
    attr->sample_stack_user = options->stack_bytes;
}

static void common_attr(struct perf_event_attr *attr, const lp_perf_options *options) {
    attr->size = sizeof(*attr);
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;  // the clock of launchprof's timeline and the hooks
    attr->sample_id_all = 1;
    attr->inherit = options->all_threads;
    attr->exclude_hv = 1;
}

// The two events of a session; lp_perf_open_anchors opens the same kinds.
static void session_attrs(const lp_perf_options *options, struct perf_event_attr *clock,
                          struct perf_event_attr *switches) {
    // On-CPU samples every period of the thread's CPU time (kernel time, page faults, counts).
    memset(clock, 0, sizeof(*clock));
    common_attr(clock, options);
    clock->type = PERF_TYPE_SOFTWARE;
    clock->config = PERF_COUNT_SW_TASK_CLOCK;
    clock->sample_period = options->period_ns;
    stack_attr(clock, options);
    clock->context_switch = 1;  // PERF_RECORD_SWITCH: when the thread left and got the CPU back
    clock->mmap = 1;            // executable mappings (libraries dlopen'ed during the launch)
    clock->mmap2 = 1;
    clock->watermark = 1;
    clock->wakeup_watermark = (uint32_t)((size_t)options->pages * 4096 / 2);

    // A stack at every switch-out: what the thread was blocked in (or preempted in). Its kernel
    // call chain names the system call it blocked in (the __x64_sys_* frame); the user stack is
    // unwound offline like the on-CPU ones.
    memset(switches, 0, sizeof(*switches));
    common_attr(switches, options);
    switches->type = PERF_TYPE_SOFTWARE;
    switches->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    switches->sample_period = 1;
    stack_attr(switches, options);
    switches->sample_type |= PERF_SAMPLE_CALLCHAIN;
    switches->exclude_callchain_user = 1;
    switches->sample_max_stack = LP_KERNEL_CHAIN_DEPTH;
}

int lp_perf_open(pid_t pid, int cpu, const lp_perf_options *options, lp_perf_session *session) {
    memset(session, 0, sizeof(*session));
    session->fds[0] = session->fds[1] = -1;
    int error = 0;
    struct perf_event_attr clock, switches;
    session_attrs(options, &clock, &switches);
    struct perf_event_attr *attrs[2] = {&clock, &switches};
    for (int index = 0; index < 2; index++) {
        session->fds[index] = perf_event_open(attrs[index], pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (session->fds[index] < 0) {
            error = errno;
            goto fail;
        }
        if (ioctl(session->fds[index], PERF_EVENT_IOC_ID, &session->ids[index]) != 0) {
            error = errno;
            goto fail;
        }
    }
    session->data_bytes = (size_t)options->pages * 4096;
    session->ring_bytes = session->data_bytes + 4096;
    session->ring = mmap(NULL, session->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, session->fds[0], 0);
    if (session->ring == MAP_FAILED) {
        session->ring = NULL;
        error = errno;
        goto fail;
    }
    if (ioctl(session->fds[1], PERF_EVENT_IOC_SET_OUTPUT, session->fds[0]) != 0) {
        error = errno;
        goto fail;
    }
    return 0;
fail:
    lp_perf_close(session);
    return error;
}

int lp_perf_drain(lp_perf_session *session, uint8_t *buffer, size_t capacity, size_t *length) {
    *length = 0;
    if (!session->ring) return EBADF;
    struct perf_event_mmap_page *page = session->ring;
    const uint8_t *data = (const uint8_t *)session->ring + 4096;
    uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = page->data_tail;
    size_t mask = session->data_bytes - 1;
    size_t copied = 0;
    while (tail < head) {
        struct perf_event_header header;
        for (size_t i = 0; i < sizeof(header); i++) ((uint8_t *)&header)[i] = data[(tail + i) & mask];
        if (header.size == 0 || copied + header.size > capacity) break;
        size_t start = (size_t)(tail & mask);
        size_t first = header.size;
        if (start + first > session->data_bytes) first = session->data_bytes - start;
        memcpy(buffer + copied, data + start, first);
        memcpy(buffer + copied + first, data, header.size - first);
        copied += header.size;
        tail += header.size;
    }
    __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
    *length = copied;
    return 0;
}

int lp_perf_wait(const lp_perf_session *sessions, int count, int wake_fd, int timeout_ms) {
    struct pollfd fds[65];
    int used = 0;
    for (int i = 0; i < count && used < 64; i++) fds[used++] = (struct pollfd){.fd = sessions[i].fds[0], .events = POLLIN};
    if (wake_fd >= 0) fds[used++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    int result;
    do {
        result = poll(fds, (nfds_t)used, timeout_ms);
    } while (result < 0 && errno == EINTR);
    return result < 0 ? errno : 0;
}

int lp_perf_open_anchors(int fds[_Nonnull 2]) {
    // The first event of a kind switches on kernel static keys (the scheduler's perf hooks, the
    // software event) and allocates the call chain buffers, which patches kernel text: hundreds
    // of µs; the last one's close undoes it and waits for RCU: tens of ms. Disabled events of
    // the same kinds on launchprof itself keep all of it in place.
    lp_perf_options options = {.period_ns = 1000000, .stack_bytes = 8, .pages = 1};
    struct perf_event_attr clock, switches;
    session_attrs(&options, &clock, &switches);
    struct perf_event_attr *attrs[2] = {&clock, &switches};
    int error = 0;
    for (int index = 0; index < 2; index++) {
        attrs[index]->disabled = 1;
        attrs[index]->watermark = 0;
        attrs[index]->wakeup_watermark = 0;
        fds[index] = perf_event_open(attrs[index], 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fds[index] < 0 && !error) error = errno;
    }
    return error;
}

void lp_perf_close(lp_perf_session *session) {
    if (session->ring) munmap(session->ring, session->ring_bytes);
    session->ring = NULL;
    for (int index = 0; index < 2; index++) {
        if (session->fds[index] >= 0) close(session->fds[index]);
        session->fds[index] = -1;
    }
}

// MARK: Offline unwinding

typedef struct object_entry {
    lp_unwind_object object;
    lp_segment *segments;
    // The binary search table of .eh_frame_hdr, as libunwind's remote table wants it.
    bool has_table;
    uint64_t table_address, table_words;
} object_entry;

struct lp_unwinder {
    const lp_unwind_library *unwind;
    unw_addr_space_t space;
    object_entry *objects;
    int count, capacity;
    int last;
    // The sample being unwound.
    const uint64_t *registers;
    const uint8_t *stack;
    uint64_t stack_start;
    size_t stack_size;
};

static object_entry *object_containing_text(lp_unwinder *u, uint64_t ip) {
    if (u->last < u->count) {
        object_entry *entry = &u->objects[u->last];
        if (ip >= entry->object.text_start && ip < entry->object.text_end) return entry;
    }
    for (int i = 0; i < u->count; i++) {
        object_entry *entry = &u->objects[i];
        if (ip >= entry->object.text_start && ip < entry->object.text_end) {
            u->last = i;
            return entry;
        }
    }
    return NULL;
}

// The file bytes behind a process address, through any object's loadable segments.
static const uint8_t *file_bytes(lp_unwinder *u, uint64_t address, size_t length) {
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < u->count; i++) {
            if (pass == 0 && i != u->last) continue;
            object_entry *entry = &u->objects[i];
            uint64_t vaddr = address - entry->object.bias;
            for (int s = 0; s < entry->object.segment_count; s++) {
                lp_segment *segment = &entry->segments[s];
                if (vaddr >= segment->vaddr && vaddr + length <= segment->vaddr + segment->file_size) {
                    uint64_t offset = segment->offset + (vaddr - segment->vaddr);
                    if (offset + length > entry->object.image_size) return NULL;
                    return entry->object.image + offset;
                }
            }
        }
    }
    return NULL;
}


static int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t *info, int need, void *arg) {
    (void)space;
    lp_unwinder *u = arg;
    object_entry *entry = object_containing_text(u, ip);
    if (!entry || !entry->has_table) return -UNW_ENOINFO;
    unw_dyn_info_t table;
    memset(&table, 0, sizeof(table));
    table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table.start_ip = entry->object.text_start;
    table.end_ip = entry->object.text_end;
    table.u.rti.segbase = entry->object.bias + entry->object.eh_frame_hdr;
    table.u.rti.table_data = entry->table_address;
    table.u.rti.table_len = entry->table_words;
    return u->unwind->search_unwind_table(u->space, ip, &table, info, need, arg);
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *info, void *arg) {
    (void)space, (void)info, (void)arg;  // libunwind frees table-format info itself
}

static int get_dyn_info_list_addr(unw_addr_space_t space, unw_word_t *address, void *arg) {
    (void)space, (void)address, (void)arg;
    return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t space, unw_word_t address, unw_word_t *value, int write, void *arg) {
    (void)space;
    lp_unwinder *u = arg;
    if (write) return -UNW_EINVAL;
    if (u->stack && address >= u->stack_start && address + sizeof(*value) <= u->stack_start + u->stack_size) {
        memcpy(value, u->stack + (address - u->stack_start), sizeof(*value));
        return 0;
    }
    const uint8_t *bytes = file_bytes(u, address, sizeof(*value));
    if (!bytes) return -UNW_EINVAL;
    memcpy(value, bytes, sizeof(*value));
    return 0;
}

// libunwind's x86_64 register numbers → perf's sample order.
static int perf_index(unw_regnum_t reg) {
    switch (reg) {
    case UNW_X86_64_RAX: return 0;
    case UNW_X86_64_RBX: return 1;
    case UNW_X86_64_RCX: return 2;
    case UNW_X86_64_RDX: return 3;
    case UNW_X86_64_RSI: return 4;
    case UNW_X86_64_RDI: return 5;
    case UNW_X86_64_RBP: return 6;
    case UNW_X86_64_RSP: return 7;
    case UNW_X86_64_RIP: return 8;
    default:
        if (reg >= UNW_X86_64_R8 && reg <= UNW_X86_64_R15) return 9 + (reg - UNW_X86_64_R8);
        return -1;
    }
}

static int access_reg(unw_addr_space_t space, unw_regnum_t reg, unw_word_t *value, int write, void *arg) {
    (void)space;
    lp_unwinder *u = arg;
    int index = perf_index(reg);
    if (index < 0 || write) return -UNW_EBADREG;
    *value = u->registers[index];
    return 0;
}

static int access_fpreg(unw_addr_space_t space, unw_regnum_t reg, unw_fpreg_t *value, int write, void *arg) {
    (void)space, (void)reg, (void)value, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int resume(unw_addr_space_t space, unw_cursor_t *cursor, void *arg) {
    (void)space, (void)cursor, (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t space, unw_word_t address, char *buffer, size_t length,
                         unw_word_t *offset, void *arg) {
    (void)space, (void)address, (void)buffer, (void)length, (void)offset, (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

lp_unwinder *lp_unwinder_create(void) {
    const lp_unwind_library *unwind = lp_unwind_library_get();
    if (!unwind) return NULL;
    lp_unwinder *u = calloc(1, sizeof(*u));
    if (!u) return NULL;
    u->unwind = unwind;
    u->space = unwind->create_addr_space(&accessors, 0);
    if (!u->space) {
        free(u);
        return NULL;
    }
    // Frames repeat from sample to sample: keep the parsed unwind rules by address (130 µs per
    // 30-frame stack without, 22 µs with, in a debug build). Per thread: no lock per frame; an
    // unwinder is used by one thread (the tracer's), and a reset bumps the cache's generation.
    u->unwind->set_caching_policy(u->space, UNW_CACHE_PER_THREAD);
    return u;
}

void lp_unwinder_reset(lp_unwinder *u) {
    for (int i = 0; i < u->count; i++) free(u->objects[i].segments);
    u->count = 0;
    u->last = 0;
    u->unwind->flush_cache(u->space, 0, 0);
}

void lp_unwinder_destroy(lp_unwinder *u) {
    if (!u) return;
    lp_unwinder_reset(u);
    free(u->objects);
    u->unwind->destroy_addr_space(u->space);
    free(u);
}

int lp_unwinder_add_object(lp_unwinder *u, const lp_unwind_object *object) {
    if (u->count == u->capacity) {
        int capacity = u->capacity ? u->capacity * 2 : 16;
        object_entry *objects = realloc(u->objects, (size_t)capacity * sizeof(*objects));
        if (!objects) return ENOMEM;
        u->objects = objects;
        u->capacity = capacity;
    }
    object_entry entry;
    memset(&entry, 0, sizeof(entry));
    entry.object = *object;
    entry.segments = malloc((size_t)(object->segment_count > 0 ? object->segment_count : 1) * sizeof(lp_segment));
    if (!entry.segments) return ENOMEM;
    memcpy(entry.segments, object->segments, (size_t)object->segment_count * sizeof(lp_segment));
    entry.object.segments = entry.segments;
    u->objects[u->count++] = entry;
    object_entry *added = &u->objects[u->count - 1];
    // .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count and the table;
    // libunwind's table search takes the usual sdata4 pointer, udata4 count, datarel sdata4 table.
    if (object->eh_frame_hdr) {
        const uint8_t *header = file_bytes(u, object->bias + object->eh_frame_hdr, 12);
        if (header && header[0] == 1 && header[1] == 0x1b && header[2] == 0x03 && header[3] == 0x3b) {
            uint32_t fde_count;
            memcpy(&fde_count, header + 8, 4);
            added->has_table = true;
            added->table_address = object->bias + object->eh_frame_hdr + 12;
            added->table_words = (uint64_t)fde_count * 8 / sizeof(unw_word_t);
        }
    }
    // A new object can sit where an unloaded one was: drop rules cached for its addresses.
    u->unwind->flush_cache(u->space, object->text_start, object->text_end);
    return 0;
}

int lp_unwinder_unwind(lp_unwinder *u, const uint64_t *registers, const uint8_t *stack, uint64_t stack_address,
                       size_t stack_size, uint64_t *ips, int capacity, int *count) {
    *count = 0;
    u->registers = registers;
    u->stack = stack;
    u->stack_start = stack_address;
    u->stack_size = stack_size;
    unw_cursor_t cursor;
    int status = u->unwind->init_remote(&cursor, u->space, u);
    while (status >= 0 && *count < capacity) {
        unw_word_t ip = 0;
        if (u->unwind->get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        ips[(*count)++] = ip;
        status = u->unwind->step(&cursor);
        if (status <= 0) break;
    }
    u->stack = NULL;
    return status < 0 ? status : 0;
}

// MARK: Demangling

extern char *__cxa_demangle(const char *name, char *buffer, size_t *length, int *status);
extern char *swift_demangle(const char *name, size_t length, char *buffer, size_t *buffer_size,
                            uint32_t flags) __attribute__((weak));

char *lp_demangle_cxx(const char *name) {
    int status = 0;
    char *result = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? result : NULL;
}

char *lp_demangle_swift(const char *name) {
    if (!swift_demangle) return NULL;
    return swift_demangle(name, strlen(name), NULL, NULL, 0);
}

uint64_t lp_vdso_base(void) { return (uint64_t)getauxval(AT_SYSINFO_EHDR); }
