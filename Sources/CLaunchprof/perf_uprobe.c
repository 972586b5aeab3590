// Uprobe perf events: a breakpoint the kernel handles itself, with a timestamp written to a ring
// buffer, so the observed process is never stopped. perf_event_open has no glibc wrapper and the
// ring buffer is raw memory: both stay here.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// Opens a probe's event (a uprobe of the PMU or a tracefs uprobe event): every hit a sample with
// its time in CLOCK_MONOTONIC, written into `output_fd`'s ring when given; its fd and id out.
// `raw`: each sample also carries the event's payload (PERF_SAMPLE_RAW: a tracefs event's fetched
// arguments), after the time.
static int open_probe_event(struct perf_event_attr *attr, pid_t pid, int cpu, int output_fd, int raw, int *fd,
                            uint64_t *id) {
    attr->sample_period = 1;
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (raw) attr->sample_type |= PERF_SAMPLE_RAW;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;
    int result = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (result < 0) return errno;
    if (output_fd >= 0 && ioctl(result, PERF_EVENT_IOC_SET_OUTPUT, output_fd) < 0) {
        int error = errno;
        close(result);
        return error;
    }
    if (ioctl(result, PERF_EVENT_IOC_ID, id) < 0) {
        int error = errno;
        close(result);
        return error;
    }
    *fd = result;
    return 0;
}

int lp_uprobe_open(pid_t pid, int cpu, uint32_t pmu_type, const char *path, uint64_t offset,
                   int output_fd, int *fd, uint64_t *id) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = pmu_type;
    attr.config = 0;  // entry probe (bit 0 would make it a return probe)
    attr.config1 = (uint64_t)(uintptr_t)path;
    attr.config2 = offset;
    return open_probe_event(&attr, pid, cpu, output_fd, 0, fd, id);
}

int lp_perf_ring_map(int fd, int data_pages, void **base, size_t *length) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = page * (size_t)(1 + data_pages);
    void *mapped = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) return errno;
    *base = mapped;
    *length = size;
    return 0;
}

void lp_perf_ring_unmap(void *base, size_t length) { munmap(base, length); }

// `lp_perf_ring_read`, and with `raw` each sample's PERF_SAMPLE_RAW payload: up to `raw_stride`
// bytes of it at raw + i * raw_stride, how many in raw_lengths[i] (0: the sample has none).
static int ring_read(void *base, size_t length, lp_perf_sample *samples, int capacity, int *count, uint64_t *lost,
                     uint8_t *raw, size_t raw_stride, uint32_t *raw_lengths) {
    struct perf_event_mmap_page *header = base;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const uint8_t *data = (const uint8_t *)base + page;
    uint64_t buffer_size = length - page;
    uint64_t head = __atomic_load_n(&header->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = header->data_tail;
    int stored = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header record;
        uint8_t bytes[64];
        for (size_t i = 0; i < sizeof record; i++) ((uint8_t *)&record)[i] = data[(tail + i) % buffer_size];
        if (record.size < sizeof record || tail + record.size > head) break;
        if (record.type == PERF_RECORD_SAMPLE && record.size >= sizeof record + 32 && stored < capacity) {
            for (size_t i = 0; i < 32; i++) bytes[i] = data[(tail + sizeof record + i) % buffer_size];
            lp_perf_sample *sample = &samples[stored++];
            memcpy(&sample->id, bytes, 8);
            memcpy(&sample->ip, bytes + 8, 8);
            memcpy(&sample->pid, bytes + 16, 4);
            memcpy(&sample->tid, bytes + 20, 4);
            memcpy(&sample->time_ns, bytes + 24, 8);
            if (raw) {
                // After the time: u32 size, then the payload (the record is padded to 8 bytes).
                uint32_t payload = 0;
                if (record.size >= sizeof record + 36) {
                    for (size_t i = 0; i < 4; i++) ((uint8_t *)&payload)[i] = data[(tail + sizeof record + 32 + i) % buffer_size];
                }
                // A payload longer than `raw_stride` is cut there (a value past the cut reads as
                // missing); one the record cannot hold is no payload.
                if (sizeof record + 36 + (size_t)payload > record.size) payload = 0;
                if (payload > raw_stride) payload = (uint32_t)raw_stride;
                uint8_t *into = raw + (size_t)(stored - 1) * raw_stride;
                for (uint32_t i = 0; i < payload; i++) into[i] = data[(tail + sizeof record + 36 + i) % buffer_size];
                raw_lengths[stored - 1] = payload;
            }
        } else if (record.type == PERF_RECORD_LOST && record.size >= sizeof record + 16) {
            uint64_t dropped;
            for (size_t i = 0; i < 8; i++) ((uint8_t *)&dropped)[i] = data[(tail + sizeof record + 8 + i) % buffer_size];
            *lost += dropped;
        } else if (record.type == PERF_RECORD_SAMPLE) {
            *lost += 1;  // no room in `samples`
        }
        tail += record.size;
    }
    __atomic_store_n(&header->data_tail, tail, __ATOMIC_RELEASE);
    *count = stored;
    return 0;
}

int lp_perf_ring_read(void *base, size_t length, lp_perf_sample *samples, int capacity,
                      int *count, uint64_t *lost) {
    return ring_read(base, length, samples, capacity, count, lost, NULL, 0, NULL);
}

void lp_perf_release_in_background(const int *fds, int count) {
    // Releasing a uprobe event waits for RCU grace periods (~90 ms each here): a short-lived
    // grandchild holds the last references and pays that, so launchprof need not wait.
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            // Named, so a benchmark can wait until the probes are really gone.
            prctl(PR_SET_NAME, "lp-uprobe-free", 0, 0, 0);
            // It must hold nothing else of launchprof's, and let go of the standard streams
            // first: an inherited stdout would keep a pipe reader (`launchprof run … | jq`)
            // waiting until the probes are released. Closing the probes' descriptors (they are
            // among the rest) is what waits.
            for (int fd = 0; fd < 3; fd++) close(fd);
            if (close_range(3, ~0U, 0) != 0) {
                for (int i = 0; i < count; i++) close(fds[i]);
            }
            _exit(0);
        }
        _exit(0);
    }
    for (int i = 0; i < count; i++) close(fds[i]);
    if (child > 0) {
        int status;
        while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {}
    }
}

uint64_t lp_uprobe_calibration_loop(int stepped, int count) {
    uint64_t (*volatile target)(uint64_t) =
        stepped ? lp_uprobe_calibration_stepped : lp_uprobe_calibration_emulated;
    uint64_t x = 0;
    uint64_t start = lp_now_ns();
    for (int i = 0; i < count; i++) x = target(x);
    uint64_t elapsed = lp_now_ns() - start;
    __asm__ volatile("" : : "r"(x));
    return elapsed;
}

// Not inlined, not optimised away: launchprof probes it in its own process to measure what one
// uprobe hit costs on this host (see UprobeCalibration).
// The first starts with a push (the kernel emulates it), the second with a lea (single-stepped
// out of line): the two costs a probe can have.
__attribute__((naked, noinline, used)) uint64_t lp_uprobe_calibration_emulated(uint64_t x) {
    __asm__ volatile("push %rbp\n\tpop %rbp\n\tlea 1(%rdi), %rax\n\tret");
}
__attribute__((naked, noinline, used)) uint64_t lp_uprobe_calibration_stepped(uint64_t x) {
    __asm__ volatile("lea 1(%rdi), %rax\n\tret");
}

static int tracepoint_open(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd, int raw, int *fd, uint64_t *id) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = tracepoint_id;
    return open_probe_event(&attr, pid, cpu, output_fd, raw, fd, id);
}

int lp_tracepoint_probe_open(pid_t pid, int cpu, uint64_t tracepoint_id, int output_fd, int *fd, uint64_t *id) {
    return tracepoint_open(pid, cpu, tracepoint_id, output_fd, 0, fd, id);
}

// MARK: The probe holder

// A line buffer takes a client's whole batch of drain requests ("D pid since", ~30 bytes each).
enum { HOLDER_MAX_EVENTS = 2048, HOLDER_MAX_CLIENTS = 64, HOLDER_LINE = 4096 };

// The holder's state lives in static memory: it runs in a child forked from a multithreaded
// process, where only async-signal-safe calls (no malloc) are safe.
static struct { int fd; char name[72]; } holder_events[HOLDER_MAX_EVENTS];
static int holder_event_count;
static struct { int fd; int used; char line[HOLDER_LINE]; } holder_clients[HOLDER_MAX_CLIENTS];
static char holder_calibration[64];

// System-wide events sample into per-CPU ring buffers the holder reads: a launchprof process then
// makes no perf_event_open or close of its own (each takes the kernel's global event_mutex, which
// another process's uprobe release holds for ~0.1 s per probe).
enum { HOLDER_MAX_CPUS = 64, HOLDER_MAX_SAMPLE_IDS = 16384, HOLDER_RECENT = 65536, HOLDER_READ = 8192 };
static struct { int fd; void *base; size_t length; } holder_rings[HOLDER_MAX_CPUS];
static int holder_cpu_count;
static struct { uint64_t sample_id; uint64_t tracepoint; } holder_sample_ids[HOLDER_MAX_SAMPLE_IDS];
static int holder_sample_id_count;
static int holder_extra_fds[HOLDER_MAX_SAMPLE_IDS];
static int holder_extra_fd_count;
// The latest hits of every process, oldest overwritten first; a drained hit's pid is set to 0.
static lp_perf_sample holder_recent[HOLDER_RECENT];
static uint64_t holder_recent_next;
static uint64_t holder_lost;
static lp_perf_sample holder_read_buffer[HOLDER_READ];
static lp_perf_sample holder_reply_buffer[HOLDER_READ];
// Hits of the events held with their payload ("R": the runtime probes' fetched file and module
// names), kept apart: the latest of every process, oldest overwritten first, a drained one's pid
// set to 0. A payload is cut at HOLDER_RAW_BYTES (a value past the cut reads as missing).
typedef struct {
    lp_perf_sample sample;
    uint32_t length;
    uint8_t bytes[LP_HOLDER_RAW_BYTES];
} holder_raw_hit;
enum { HOLDER_RAW_RECENT = 16384 };
static holder_raw_hit holder_raw_recent[HOLDER_RAW_RECENT];
static uint64_t holder_raw_next;
static uint8_t holder_read_raw[HOLDER_READ * LP_HOLDER_RAW_BYTES];
static uint32_t holder_read_raw_lengths[HOLDER_READ];

static void holder_read_rings(void) {
    for (int cpu = 0; cpu < holder_cpu_count; cpu++) {
        if (!holder_rings[cpu].base) continue;
        int count = 0;
        do {
            ring_read(holder_rings[cpu].base, holder_rings[cpu].length, holder_read_buffer, HOLDER_READ, &count,
                      &holder_lost, holder_read_raw, LP_HOLDER_RAW_BYTES, holder_read_raw_lengths);
            for (int i = 0; i < count; i++) {
                lp_perf_sample sample = holder_read_buffer[i];
                uint64_t tracepoint = 0;
                for (int j = 0; j < holder_sample_id_count; j++) {
                    if (holder_sample_ids[j].sample_id == sample.id) { tracepoint = holder_sample_ids[j].tracepoint; break; }
                }
                if (tracepoint == 0) continue;
                sample.id = tracepoint;
                if (holder_read_raw_lengths[i] == 0) {
                    holder_recent[holder_recent_next++ % HOLDER_RECENT] = sample;
                    continue;
                }
                holder_raw_hit *hit = &holder_raw_recent[holder_raw_next++ % HOLDER_RAW_RECENT];
                hit->sample = sample;
                hit->length = holder_read_raw_lengths[i];
                memcpy(hit->bytes, holder_read_raw + (size_t)i * LP_HOLDER_RAW_BYTES, hit->length);
            }
        } while (count == HOLDER_READ);
    }
}

// One sampling event per CPU on `tracepoint`, into the CPU's ring; `raw`: with its payload.
static int holder_open_sampling(uint64_t tracepoint, int raw, int *first_fd) {
    *first_fd = -1;
    for (int cpu = 0; cpu < holder_cpu_count; cpu++) {
        int fd = -1;
        uint64_t id = 0;
        int output = holder_rings[cpu].base ? holder_rings[cpu].fd : -1;
        int error = tracepoint_open(-1, cpu, tracepoint, output, raw, &fd, &id);
        if (error == ENODEV || (error == EINVAL && cpu > 0 && output < 0)) continue;  // offline CPU
        if (error != 0) return error;
        if (!holder_rings[cpu].base) {
            void *base = NULL;
            size_t length = 0;
            int mapped = lp_perf_ring_map(fd, 64, &base, &length);
            if (mapped != 0) { close(fd); return mapped; }
            holder_rings[cpu].fd = fd;
            holder_rings[cpu].base = base;
            holder_rings[cpu].length = length;
        }
        if (holder_sample_id_count < HOLDER_MAX_SAMPLE_IDS) {
            holder_sample_ids[holder_sample_id_count].sample_id = id;
            holder_sample_ids[holder_sample_id_count++].tracepoint = tracepoint;
        }
        if (*first_fd < 0) *first_fd = fd;
        else if (holder_extra_fd_count < HOLDER_MAX_SAMPLE_IDS) holder_extra_fds[holder_extra_fd_count++] = fd;
    }
    return *first_fd >= 0 ? 0 : ENODEV;
}

// Replies to the requests of one read from a client go out in one send, after the last of them:
// a client that sends a batch of requests is woken once for all the replies, not once per reply.
enum { HOLDER_OUT = 1 << 20 };
static char holder_out[HOLDER_OUT];
static size_t holder_out_length;

static void holder_send_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = send(fd, bytes, length, MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        bytes += written;
        length -= (size_t)written;
    }
}

static void holder_flush(int fd) {
    holder_send_all(fd, holder_out, holder_out_length);
    holder_out_length = 0;
}

static void holder_append(int fd, const void *bytes, size_t length) {
    if (holder_out_length + length > HOLDER_OUT) holder_flush(fd);
    if (length > HOLDER_OUT) {
        holder_send_all(fd, bytes, length);
        return;
    }
    memcpy(holder_out + holder_out_length, bytes, length);
    holder_out_length += length;
}

// "D <pid>": every kept hit of `pid`, oldest first, as a binary reply: uint32 count, uint64 lost,
// then `count` lp_perf_sample (id = the tracepoint id).
// `since`: hits before it are not wanted. The buffer is scanned from the newest back, and stops
// 5 s of hit time before `since`: a hit appended later than one that old was read at most a few
// ring reads (20 ms each) later, so the scan covers every wanted hit without reading 2 MB each time.
static void holder_drain(int client, int32_t pid, uint64_t since) {
    holder_read_rings();
    uint32_t count = 0;
    uint64_t start = holder_recent_next > HOLDER_RECENT ? holder_recent_next - HOLDER_RECENT : 0;
    uint64_t oldest = since > 5000000000ULL ? since - 5000000000ULL : 0;
    uint64_t first = holder_recent_next;
    while (first > start && holder_recent[(first - 1) % HOLDER_RECENT].time_ns >= oldest) first--;
    for (uint64_t i = first; i < holder_recent_next && count < HOLDER_READ; i++) {
        lp_perf_sample *sample = &holder_recent[i % HOLDER_RECENT];
        if ((int32_t)sample->pid != pid || pid == 0 || sample->time_ns < since) continue;
        holder_reply_buffer[count++] = *sample;
        sample->pid = 0;
    }
    char header[12];
    memcpy(header, &count, 4);
    memcpy(header + 4, &holder_lost, 8);
    holder_lost = 0;
    holder_append(client, header, sizeof header);
    holder_append(client, holder_reply_buffer, count * sizeof(lp_perf_sample));
}
// "X <pid> <since>": `holder_drain` for the hits with a payload: uint32 count, uint64 0, then per
// hit an lp_perf_sample, a uint32 length and that many bytes of payload. (Their losses are in
// the "D" reply's count: both kinds share the rings.)
static void holder_drain_raw(int client, int32_t pid, uint64_t since) {
    holder_read_rings();
    uint64_t start = holder_raw_next > HOLDER_RAW_RECENT ? holder_raw_next - HOLDER_RAW_RECENT : 0;
    uint64_t oldest = since > 5000000000ULL ? since - 5000000000ULL : 0;
    uint64_t first = holder_raw_next;
    while (first > start && holder_raw_recent[(first - 1) % HOLDER_RAW_RECENT].sample.time_ns >= oldest) first--;
    uint32_t count = 0;
    for (uint64_t i = first; i < holder_raw_next && count < HOLDER_READ; i++) {
        lp_perf_sample *sample = &holder_raw_recent[i % HOLDER_RAW_RECENT].sample;
        if ((int32_t)sample->pid == pid && pid != 0 && sample->time_ns >= since) count++;
    }
    char header[12];
    uint64_t none = 0;
    memcpy(header, &count, 4);
    memcpy(header + 4, &none, 8);
    holder_append(client, header, sizeof header);
    uint32_t sent = 0;
    for (uint64_t i = first; i < holder_raw_next && sent < count; i++) {
        holder_raw_hit *hit = &holder_raw_recent[i % HOLDER_RAW_RECENT];
        if ((int32_t)hit->sample.pid != pid || pid == 0 || hit->sample.time_ns < since) continue;
        holder_append(client, &hit->sample, sizeof hit->sample);
        holder_append(client, &hit->length, 4);
        holder_append(client, hit->bytes, hit->length);
        hit->sample.pid = 0;
        sent++;
    }
}

static char holder_uprobe_events[512];
// The socket's name in its directory (descriptor 4 in the holder): removed before the holder exits.
static char holder_socket_name[256];

static void holder_reply(int fd, const char *text) { holder_append(fd, text, strlen(text)); }

static void holder_format_number(char *out, int value) {
    char digits[16];
    int count = 0;
    unsigned magnitude = value < 0 ? (unsigned)-value : (unsigned)value;
    do { digits[count++] = (char)('0' + magnitude % 10); magnitude /= 10; } while (magnitude > 0);
    int at = 0;
    if (value < 0) out[at++] = '-';
    while (count > 0) out[at++] = digits[--count];
    out[at++] = '\n';
    out[at] = 0;
}

// "H <tracepoint id> <event name>" holds an event system-wide (its probe is then in every process
// mapping the file); "R <id> <name>" likewise, its hits with their payload (fetched arguments);
// "P <id> <name>" holds it for the holder's own process only (the probe of a function launchprof
// calls in itself, which must not trap elsewhere). "C" reads the stored hit calibration,
// "K <text>" stores it.
static void holder_handle(int client, char *line) {
    char reply[96];
    if ((line[0] == 'H' || line[0] == 'R' || line[0] == 'P') && line[1] == ' ') {
        char *cursor = line + 2;
        uint64_t tracepoint = 0;
        while (*cursor >= '0' && *cursor <= '9') tracepoint = tracepoint * 10 + (uint64_t)(*cursor++ - '0');
        while (*cursor == ' ') cursor++;
        for (int i = 0; i < holder_event_count; i++) {
            if (strcmp(holder_events[i].name, cursor) == 0) { holder_reply(client, "0\n"); return; }
        }
        if (holder_event_count == HOLDER_MAX_EVENTS || strlen(cursor) >= sizeof holder_events[0].name) {
            holder_reply(client, "24\n");  // EMFILE
            return;
        }
        int fd = -1;
        if (line[0] == 'H' || line[0] == 'R') {
            int error = holder_open_sampling(tracepoint, line[0] == 'R', &fd);
            if (error != 0) {
                holder_format_number(reply, error);
                holder_reply(client, reply);
                return;
            }
        } else {
            struct perf_event_attr attr;
            memset(&attr, 0, sizeof attr);
            attr.size = sizeof attr;
            attr.type = PERF_TYPE_TRACEPOINT;
            attr.config = tracepoint;  // counting only: no buffer, nothing written per hit
            fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
            if (fd < 0) {
                holder_format_number(reply, errno);
                holder_reply(client, reply);
                return;
            }
        }
        holder_events[holder_event_count].fd = fd;
        strcpy(holder_events[holder_event_count].name, cursor);
        holder_event_count++;
        holder_reply(client, "0\n");
    } else if ((line[0] == 'D' || line[0] == 'X') && line[1] == ' ') {
        int32_t pid = 0;
        uint64_t since = 0;
        char *cursor = line + 2;
        for (; *cursor >= '0' && *cursor <= '9'; cursor++) pid = pid * 10 + (*cursor - '0');
        while (*cursor == ' ') cursor++;
        for (; *cursor >= '0' && *cursor <= '9'; cursor++) since = since * 10 + (uint64_t)(*cursor - '0');
        if (line[0] == 'D') holder_drain(client, pid, since);
        else holder_drain_raw(client, pid, since);
    } else if (line[0] == 'C' && line[1] == 0) {
        holder_reply(client, holder_calibration[0] ? holder_calibration : "-");
        holder_reply(client, "\n");
    } else if (line[0] == 'K' && line[1] == ' ' && strlen(line + 2) < sizeof holder_calibration) {
        strcpy(holder_calibration, line + 2);
        holder_reply(client, "0\n");
    } else {
        holder_reply(client, "22\n");  // EINVAL
    }
}

static int64_t holder_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void holder_serve(int listener, int linger_ms) {
    int64_t idle_since = holder_now_ms();
    for (;;) {
        struct pollfd polled[HOLDER_MAX_CLIENTS + 1];
        int slots[HOLDER_MAX_CLIENTS + 1];
        int count = 0, clients = 0;
        polled[count].fd = listener;
        polled[count].events = POLLIN;
        slots[count++] = -1;
        for (int i = 0; i < HOLDER_MAX_CLIENTS; i++) {
            if (!holder_clients[i].used) continue;
            polled[count].fd = holder_clients[i].fd;
            polled[count].events = POLLIN;
            slots[count++] = i;
            clients++;
        }
        // The rings are read every 20 ms at least, so they never fill (64 pages: ~5,000 hits).
        int timeout = 20;
        if (clients == 0) {
            int64_t left = idle_since + linger_ms - holder_now_ms();
            if (left <= 0) return;
            if (left < timeout) timeout = (int)left;
        }
        int ready = poll(polled, (nfds_t)count, timeout);
        if (ready < 0 && errno != EINTR) return;
        if (ready <= 0) {
            holder_read_rings();
            continue;
        }
        if (polled[0].revents & POLLIN) {
            int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
            struct ucred peer;
            socklen_t size = sizeof peer;
            if (client >= 0) {
                int slot = -1;
                for (int i = 0; i < HOLDER_MAX_CLIENTS && slot < 0; i++) if (!holder_clients[i].used) slot = i;
                // Only the holder's own user may make it hold events.
                if (slot < 0 || getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != geteuid()) {
                    close(client);
                } else {
                    holder_clients[slot].fd = client;
                    holder_clients[slot].used = 1;
                    holder_clients[slot].line[0] = 0;
                }
            }
        }
        for (int p = 1; p < count; p++) {
            if (!polled[p].revents) continue;
            int slot = slots[p];
            char *line = holder_clients[slot].line;
            size_t have = strlen(line);
            ssize_t got = recv(holder_clients[slot].fd, line + have, HOLDER_LINE - 1 - have, 0);
            if (got <= 0) {
                if (got < 0 && errno == EINTR) continue;
                close(holder_clients[slot].fd);
                holder_clients[slot].used = 0;
                idle_since = holder_now_ms();
                continue;
            }
            line[have + (size_t)got] = 0;
            char *end;
            while ((end = strchr(line, '\n')) != NULL) {
                *end = 0;
                holder_handle(holder_clients[slot].fd, line);
                memmove(line, end + 1, strlen(end + 1) + 1);
            }
            holder_flush(holder_clients[slot].fd);
            if (strlen(line) == HOLDER_LINE - 1) line[0] = 0;  // an over-long line: dropped
        }
    }
}

static void holder_release(void) {
    for (int cpu = 0; cpu < holder_cpu_count; cpu++) {
        if (holder_rings[cpu].base) munmap(holder_rings[cpu].base, holder_rings[cpu].length);
    }
    for (int i = 0; i < holder_extra_fd_count; i++) close(holder_extra_fds[i]);
    for (int i = 0; i < holder_event_count; i++) close(holder_events[i].fd);
    int events = open(holder_uprobe_events, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (events < 0) return;
    for (int i = 0; i < holder_event_count; i++) {
        // "-:launchprof/NAME"; EBUSY when a newer holder uses it already: it stays.
        char removal[96] = "-:launchprof/";
        strcat(removal, holder_events[i].name);
        if (write(events, removal, strlen(removal)) < 0) {}
    }
    close(events);
}

int lp_uprobe_holder_start(int listener, int directory, const char *socket_name, const char *uprobe_events,
                           int linger_ms) {
    if (strlen(uprobe_events) >= sizeof holder_uprobe_events || strlen(socket_name) >= sizeof holder_socket_name)
        return ENAMETOOLONG;
    pid_t child = fork();
    if (child < 0) return errno;
    if (child == 0) {
        setsid();
        if (fork() != 0) _exit(0);
        prctl(PR_SET_NAME, "lp-uprobe-hold", 0, 0, 0);
        // It outlives the launchprof that started it: at the default priority, whatever that one
        // ran at (calibrate raises its own).
        setpriority(PRIO_PROCESS, 0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        // Nothing of launchprof's: no standard streams (a pipe reader of `launchprof run | jq`
        // would wait for them), no perf events, no traced child's descriptors. The listener
        // becomes descriptor 3, its directory 4.
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++) if (null >= 0) dup2(null, fd);
        int moved_listener = fcntl(listener, F_DUPFD_CLOEXEC, 10);
        int moved_directory = fcntl(directory, F_DUPFD_CLOEXEC, 10);
        dup2(moved_listener, 3);
        dup2(moved_directory, 4);
        close_range(5, ~0U, 0);
        listener = 3;
        if (chdir("/") != 0) {}
        strcpy(holder_uprobe_events, uprobe_events);
        strcpy(holder_socket_name, socket_name);
        holder_event_count = 0;
        holder_calibration[0] = 0;
        long cpus = sysconf(_SC_NPROCESSORS_CONF);
        holder_cpu_count = cpus < 1 ? 1 : cpus > HOLDER_MAX_CPUS ? HOLDER_MAX_CPUS : (int)cpus;
        memset(holder_clients, 0, sizeof holder_clients);
        holder_serve(listener, linger_ms);
        // Named before the socket goes, so a launchprof that finds no holder also finds this.
        prctl(PR_SET_NAME, "lp-uprobe-free", 0, 0, 0);
        // The socket file goes before the listener closes: a launchprof that then finds no
        // holder binds a fresh one, never this name after us.
        unlinkat(4, holder_socket_name, 0);
        close(listener);
        holder_release();
        _exit(0);
    }
    int status;
    while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {}
    return 0;
}

int lp_uprobe_holder_request(int fd, const char *line, char *reply, int capacity) {
    size_t length = strlen(line);
    const char *cursor = line;
    while (length > 0) {
        ssize_t written = send(fd, cursor, length, MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return written < 0 ? errno : EPIPE;
        cursor += written;
        length -= (size_t)written;
    }
    // The reply is one line and nothing follows it until the next request: read it in chunks.
    int have = 0;
    while (have < capacity - 1) {
        ssize_t got = recv(fd, reply + have, (size_t)(capacity - 1 - have), 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : EPIPE;
        char *newline = memchr(reply + have, '\n', (size_t)got);
        have += (int)got;
        if (newline) {
            *newline = 0;
            return 0;
        }
    }
    reply[have] = 0;
    return 0;
}

int lp_uprobe_holder_drain_send(int fd, char kind, const int32_t *pids, const uint64_t *since_ns, int count) {
    char *lines = malloc((size_t)(count > 0 ? count : 1) * 48);
    if (!lines) return ENOMEM;
    int at = 0;
    for (int i = 0; i < count; i++) {
        char digits[24];
        int length = 0;
        lines[at++] = kind;
        lines[at++] = ' ';
        uint64_t value = (uint32_t)pids[i];
        do { digits[length++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
        while (length > 0) lines[at++] = digits[--length];
        lines[at++] = ' ';
        value = since_ns[i];
        do { digits[length++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
        while (length > 0) lines[at++] = digits[--length];
        lines[at++] = '\n';
    }
    // One send: the holder reads the batch at once and answers it with one send.
    int error = 0;
    for (int sent = 0; sent < at;) {
        ssize_t written = send(fd, lines + sent, (size_t)(at - sent), MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            error = written < 0 ? errno : EPIPE;
            break;
        }
        sent += (int)written;
    }
    free(lines);
    return error;
}

int lp_uprobe_holder_drain(int fd, int32_t pid, uint64_t since_ns, lp_perf_sample *samples, int capacity, int *count,
                           uint64_t *lost) {
    int error = lp_uprobe_holder_drain_send(fd, 'D', &pid, &since_ns, 1);
    return error != 0 ? error : lp_uprobe_holder_drain_receive(fd, samples, capacity, count, lost);
}

int lp_uprobe_holder_drain_receive(int fd, lp_perf_sample *samples, int capacity, int *count, uint64_t *lost) {
    char header[12];
    for (size_t have = 0; have < sizeof header;) {
        ssize_t got = recv(fd, header + have, sizeof header - have, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : EPIPE;
        have += (size_t)got;
    }
    uint32_t total;
    memcpy(&total, header, 4);
    memcpy(lost, header + 4, 8);
    *count = 0;
    // The samples in as few reads as the socket allows; those beyond `capacity` are counted lost.
    size_t wanted = (size_t)total * sizeof(lp_perf_sample);
    size_t kept = (size_t)(total < (uint32_t)capacity ? total : (uint32_t)capacity) * sizeof(lp_perf_sample);
    for (size_t have = 0; have < wanted;) {
        char overflow[4096];
        char *into = have < kept ? (char *)samples + have : overflow;
        size_t room = have < kept ? kept - have : (wanted - have < sizeof overflow ? wanted - have : sizeof overflow);
        ssize_t got = recv(fd, into, room, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : EPIPE;
        have += (size_t)got;
    }
    *count = (int)(kept / sizeof(lp_perf_sample));
    *lost += total - (uint32_t)*count;
    return 0;
}

// Reads exactly `length` bytes (into `into`, or discarded when it is NULL).
static int receive_exactly(int fd, void *into, size_t length) {
    char discard[512];
    for (size_t have = 0; have < length;) {
        size_t room = length - have;
        if (!into && room > sizeof discard) room = sizeof discard;
        ssize_t got = recv(fd, into ? (char *)into + have : discard, room, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : EPIPE;
        have += (size_t)got;
    }
    return 0;
}

int lp_uprobe_holder_drain_raw_receive(int fd, lp_perf_sample *samples, uint8_t *payloads, uint32_t *lengths,
                                       int capacity, int *count, uint64_t *lost) {
    char header[12];
    int error = receive_exactly(fd, header, sizeof header);
    if (error != 0) return error;
    uint32_t total;
    memcpy(&total, header, 4);
    *count = 0;
    *lost = 0;
    for (uint32_t i = 0; i < total; i++) {
        lp_perf_sample sample;
        uint32_t length;
        if ((error = receive_exactly(fd, &sample, sizeof sample)) != 0) return error;
        if ((error = receive_exactly(fd, &length, 4)) != 0) return error;
        // The holder never sends more than it keeps: a longer payload is a broken stream.
        if (length > LP_HOLDER_RAW_BYTES) return EPROTO;
        int keep = *count < capacity;
        error = receive_exactly(fd, keep ? payloads + (size_t)*count * LP_HOLDER_RAW_BYTES : NULL, length);
        if (error != 0) return error;
        if (!keep) {
            *lost += 1;
            continue;
        }
        samples[*count] = sample;
        lengths[*count] = length;
        *count += 1;
    }
    return 0;
}
