/*
 * Shared helpers of the `run-*` fixtures: configurable work and the fixture's own truth.
 *
 * Work is configured in microseconds by environment variables (missing or malformed = the
 * default, capped at 10 s). Busy work spins on CLOCK_MONOTONIC; blocking work sleeps.
 *
 * Truth: when LP_FIXTURE_TRUTH names a file, each measured span is appended to it as one line,
 *     <kind> <name> <begin-ns> <end-ns>
 * in CLOCK_MONOTONIC ns, written with a single O_APPEND write (so threads and processes do not
 * interleave) after the span's end stamp, outside the span. Kinds: ctor (a constructor; name =
 * the object's file name, or "program"), main (instant), phase (a hooked app phase),
 * first-frame, task (an extended-launch task), exec (an image of an exec chain: name = its
 * index, begin = its main, end = just before it execs), listen, daemon (name = the pid),
 * exit (instant: just before the program returns from main or calls exit).
 */
#ifndef RUN_FIXTURE_H
#define RUN_FIXTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t lp_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static inline uint64_t lp_setting(const char *name, uint64_t fallback) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') {
        return fallback;
    }
    uint64_t value = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (*p < '0' || *p > '9') {
            return fallback;
        }
        value = value * 10 + (uint64_t)(*p - '0');
        if (value > 10000000) {
            return 10000000;
        }
    }
    return value;
}

static inline void lp_busy_us(uint64_t us) {
    uint64_t end = lp_now() + us * 1000;
    while (lp_now() < end) {
    }
}

static inline void lp_blocking_us(uint64_t us) {
    struct timespec delay = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
    }
}

/* Busy then blocking work, as configured by <prefix>_BUSY_US and <prefix>_SLEEP_US. */
static inline void lp_work(const char *prefix, uint64_t busy_default, uint64_t sleep_default) {
    char name[160];
    size_t length = strlen(prefix);
    if (length > sizeof name - 16) {
        return;
    }
    memcpy(name, prefix, length);
    memcpy(name + length, "_BUSY_US", 9);
    lp_busy_us(lp_setting(name, busy_default));
    memcpy(name + length, "_SLEEP_US", 10);
    lp_blocking_us(lp_setting(name, sleep_default));
}

/* Appends "<value>" in decimal. */
static inline size_t lp_append_number(char *line, size_t length, uint64_t value) {
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0) {
        line[length++] = digits[--count];
    }
    return length;
}

/* Opened before a span starts, so the open is not timed; -1 without LP_FIXTURE_TRUTH. */
static inline int lp_truth_open(void) {
    const char *path = getenv("LP_FIXTURE_TRUTH");
    if (path == NULL || *path == '\0') {
        return -1;
    }
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static inline void lp_truth_write(int fd, const char *kind, const char *name, uint64_t begin,
                                  uint64_t end) {
    if (fd < 0) {
        return;
    }
    char line[512];
    size_t length = 0;
    size_t kind_length = strlen(kind), name_length = strlen(name);
    if (kind_length + name_length > 400) {
        return;
    }
    memcpy(line, kind, kind_length);
    length += kind_length;
    line[length++] = ' ';
    memcpy(line + length, name, name_length);
    length += name_length;
    line[length++] = ' ';
    length = lp_append_number(line, length, begin);
    line[length++] = ' ';
    length = lp_append_number(line, length, end);
    line[length++] = '\n';
    (void)!write(fd, line, length);
}

/* Writes one truth line, opening and closing the file around it. */
static inline void lp_truth(const char *kind, const char *name, uint64_t begin, uint64_t end) {
    int fd = lp_truth_open();
    lp_truth_write(fd, kind, name, begin, end);
    if (fd >= 0) {
        close(fd);
    }
}

#endif
