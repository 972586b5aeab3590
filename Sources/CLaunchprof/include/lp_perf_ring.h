// Reading an mmap'd perf ring buffer: the one read loop the sampler, the thread-state events, the
// uprobe observer and the field monitor share, each with its own handling of the records.
#ifndef LP_PERF_RING_H
#define LP_PERF_RING_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if !__has_feature(nullability)
#define _Nonnull
#define _Nullable
#endif

/// One read of a ring: the metadata page, then a data area of a power-of-two size that the
/// kernel fills with records and wraps. A read takes the kernel's head once (acquire), walks
/// the records from the tail, and gives what it passed back to the kernel with one release
/// store of the tail (lp_ring_end).
typedef struct lp_ring_reader {
    void *_Nonnull page;
    const uint8_t *_Nonnull data;
    uint64_t size;
    uint64_t head, tail;
    /// The current record's header (after lp_ring_next returned 1).
    uint32_t type;
    uint16_t misc, record_size;
} lp_ring_reader;

/// Begins a read of the ring mapped at `base`: its data area starts `page_bytes` in and is
/// `data_bytes` long.
lp_ring_reader lp_ring_begin(void *_Nonnull base, size_t page_bytes, size_t data_bytes);
/// Frames the record at the tail: 1 (its header in `type`, `misc`, `record_size`), 0 when no
/// whole record is left, -1 when it cannot be framed (a size smaller than a header or reaching
/// past the head: nothing the kernel writes).
int lp_ring_next(lp_ring_reader *_Nonnull reader);
/// Copies `count` bytes from `offset` into the current record, across the wrap.
void lp_ring_copy(const lp_ring_reader *_Nonnull reader, size_t offset, void *_Nonnull out, size_t count);
/// Moves past the current record.
void lp_ring_advance(lp_ring_reader *_Nonnull reader);
/// Drops everything up to the head (what follows a record that cannot be framed cannot be either).
void lp_ring_discard(lp_ring_reader *_Nonnull reader);
/// Ends the read: the records passed are the kernel's again.
void lp_ring_end(lp_ring_reader *_Nonnull reader);

struct perf_event_attr;
/// Opens the perf event `attr` describes (close-on-exec) for `pid` on `cpu`, as perf_event_open(2),
/// and maps its ring of `data_pages` (a power of two) pages. 0 or an errno; nothing is left open
/// on failure.
int lp_perf_open_ring(struct perf_event_attr *_Nonnull attr, pid_t pid, int cpu, int data_pages, int *_Nonnull fd,
                      void *_Nullable *_Nonnull base, size_t *_Nonnull length);
/// A ring of the context switches of thread `tid` (a software dummy event with context_switch,
/// PERF_SAMPLE_TID | TIME on CLOCK_MONOTONIC with every record), `data_pages` (a power of two)
/// pages: the smallest real ring, to check the reader with. 0 or an errno.
int lp_ring_open_switches(pid_t tid, int data_pages, int *_Nonnull fd, void *_Nullable *_Nonnull base,
                          size_t *_Nonnull length);

#endif
