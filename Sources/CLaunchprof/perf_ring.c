// The read loop of an mmap'd perf ring (lp_perf_ring.h). The kernel publishes data_head after
// writing the records before it, and reuses the space before data_tail once the reader stores
// it: head is loaded with acquire, the tail stored with release after the records are copied.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

lp_ring_reader lp_ring_begin(void *base, size_t page_bytes, size_t data_bytes) {
    struct perf_event_mmap_page *page = base;
    return (lp_ring_reader){
        .page = base,
        .data = (const uint8_t *)base + page_bytes,
        .size = data_bytes,
        .head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE),
        .tail = page->data_tail,
    };
}

void lp_ring_copy(const lp_ring_reader *reader, size_t offset, void *out, size_t count) {
    uint64_t start = (reader->tail + offset) & (reader->size - 1);
    size_t first = count;
    if (start + count > reader->size) first = (size_t)(reader->size - start);
    memcpy(out, reader->data + start, first);
    if (first < count) memcpy((uint8_t *)out + first, reader->data, count - first);
}

int lp_ring_next(lp_ring_reader *reader) {
    struct perf_event_header header;
    if (reader->tail + sizeof header > reader->head) return 0;
    lp_ring_copy(reader, 0, &header, sizeof header);
    if (header.size < sizeof header || reader->tail + header.size > reader->head) return -1;
    reader->type = header.type;
    reader->misc = header.misc;
    reader->record_size = header.size;
    return 1;
}

void lp_ring_advance(lp_ring_reader *reader) { reader->tail += reader->record_size; }

void lp_ring_discard(lp_ring_reader *reader) { reader->tail = reader->head; }

void lp_ring_end(lp_ring_reader *reader) {
    struct perf_event_mmap_page *page = reader->page;
    __atomic_store_n(&page->data_tail, reader->tail, __ATOMIC_RELEASE);
}

int lp_ring_open_switches(pid_t tid, int data_pages, int *fd, void **base, size_t *length) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.context_switch = 1;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.exclude_hv = 1;
    return lp_perf_open_ring(&attr, tid, -1, data_pages, fd, base, length);
}

int lp_perf_open_ring(struct perf_event_attr *attr, pid_t pid, int cpu, int data_pages, int *fd, void **base,
                      size_t *length) {
    int result = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (result < 0) return errno;
    int mapped = lp_perf_ring_map(result, data_pages, base, length);
    if (mapped != 0) {
        close(result);
        return mapped;
    }
    *fd = result;
    return 0;
}
