/*
 * launchprof.h: launch hooks for apps profiled by `launchprof run`.
 *
 * Header-only: `#include "launchprof.h"` is all a C or C++ program needs; there is nothing to
 * link. Without launchprof (LAUNCHPROF_HOOK_FD unset) every call returns at once, after one
 * getenv on the first call. The calls never block, never fail, never raise SIGPIPE, never
 * allocate and leave errno as they found it, so they are safe anywhere, on any thread, in
 * constructors, and after fork (the descriptor is shared; the events name no pid).
 *
 *   void launchprof_begin(const char *phase);      e.g. "willFinishLaunching", "restoreState",
 *   void launchprof_end(const char *phase);             "didFinishLaunching", or any name
 *   void launchprof_first_frame(void);
 *   void launchprof_extend_launch(const char *task_id);            like MetricKit's
 *   void launchprof_finish_extended_launch(const char *task_id);   extendLaunchMeasurement
 *   void launchprof_set_lifecycle_callback(void (*callback)(const char *event));  app states
 *
 * THE CHANNEL (any language can speak it without this header)
 *
 * launchprof creates socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC), keeps one end and passes
 * the other to the child as descriptor 9 (not close-on-exec; a single digit, so any POSIX shell,
 * dash included, can redirect to it), with LAUNCHPROF_HOOK_FD=9 in the child's environment.
 * Read the number from the variable all the same. Each event is one line of text:
 *
 *     <kind> <monotonic-ns> [<name>]\n
 *
 *   kind          begin | end | first-frame | extend | finish-extend
 *   monotonic-ns  CLOCK_MONOTONIC in decimal nanoseconds, or "-" for "stamp it when launchprof
 *                 receives it" (for shells and languages without a monotonic clock)
 *   name          the rest of the line: the phase name (begin, end) or the task id (extend,
 *                 finish-extend); none for first-frame. Names must not contain a newline.
 *
 * Send each line with one non-blocking write and ignore errors: when launchprof is gone the
 * send fails, and the app must go on.
 *
 *   shell:   [ -n "$LAUNCHPROF_HOOK_FD" ] && echo "first-frame -" >&"$LAUNCHPROF_HOOK_FD"
 *   Python:  fd = int(os.environ.get("LAUNCHPROF_HOOK_FD", "-1"))
 *            if fd >= 0:
 *                line = f"begin {time.monotonic_ns()} loadConfig\n".encode()
 *                try: os.write(fd, line)
 *                except OSError: pass
 *
 * Rules launchprof checks (as warnings in the report, like MetricKit): at most 16 extended
 * tasks, task ids up to 128 characters, the first task extended before the first frame; every
 * begin has an end; one first frame.
 *
 * USDT PROBES (launches launchprof did not start)
 *
 * Each hook is also a SystemTap SDT probe of provider `launchprof` when <sys/sdt.h> is found at
 * build time (Debian: systemtap-sdt-dev; define LAUNCHPROF_NO_SDT to leave them out):
 *
 *   launchprof:begin(const char *phase)   launchprof:end(const char *phase)
 *   launchprof:first_frame()
 *   launchprof:extend(const char *task)   launchprof:finish_extend(const char *task)
 *
 * A probe is a `nop` and a note in .note.stapsdt: nothing runs when no tool listens, and there
 * is no semaphore to keep (the one argument is a pointer the call has anyway). `launchprof
 * monitor` places uprobes on them, so a watched program's phases are recorded wherever it is
 * started from; perf (`perf probe -x APP sdt_launchprof:begin`) and bpftrace
 * (`usdt:APP:launchprof:begin { printf("%s\n", str(arg0)); }`) read them too. The time is the
 * kernel's, taken at the probe. Bindings that speak the channel themselves can fire the probe
 * half alone: launchprof_usdt_begin(phase) and the others below.
 */
#ifndef LAUNCHPROF_H
#define LAUNCHPROF_H

/* clock_gettime and send are POSIX: a strict -std=c99 build needs the feature macro, which only
 * takes effect when this header comes before any system header (or define it yourself). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if !defined(LAUNCHPROF_NO_SDT) && defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define LAUNCHPROF_HAS_SDT 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The USDT half of each hook (see USDT PROBES above); empty without <sys/sdt.h>. Not inlined
 * into every caller: one probe site per hook and translation unit, whose argument is always the
 * function's own first parameter. */
#ifdef LAUNCHPROF_HAS_SDT
#define LAUNCHPROF__USDT __attribute__((noinline, unused))
#define LAUNCHPROF__PROBE1(name, argument) STAP_PROBE1(launchprof, name, argument)
#define LAUNCHPROF__PROBE0(name) STAP_PROBE(launchprof, name)
#else
#define LAUNCHPROF__USDT __attribute__((unused))
#define LAUNCHPROF__PROBE1(name, argument) ((void)(argument))
#define LAUNCHPROF__PROBE0(name) ((void)0)
#endif

/* sys/sdt.h leaves a variadic macro's `...` empty, which clang's -pedantic calls a C23
 * extension; `unused` only keeps a translation unit that calls no hook quiet. */
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wvariadic-macro-arguments-omitted"
#pragma clang diagnostic ignored "-Wgnu-zero-variadic-macro-arguments"
#pragma clang diagnostic ignored "-Wused-but-marked-unused"
#endif
static LAUNCHPROF__USDT void launchprof_usdt_begin(const char *phase) { LAUNCHPROF__PROBE1(begin, phase); }
static LAUNCHPROF__USDT void launchprof_usdt_end(const char *phase) { LAUNCHPROF__PROBE1(end, phase); }
static LAUNCHPROF__USDT void launchprof_usdt_first_frame(void) { LAUNCHPROF__PROBE0(first_frame); }
static LAUNCHPROF__USDT void launchprof_usdt_extend(const char *task_id) { LAUNCHPROF__PROBE1(extend, task_id); }
static LAUNCHPROF__USDT void launchprof_usdt_finish_extend(const char *task_id) {
    LAUNCHPROF__PROBE1(finish_extend, task_id);
}
#ifdef __clang__
#pragma clang diagnostic pop
#endif

/* The largest line sent: the kind, a 20-digit time and a name cut to fit (the report rejects
 * task ids over 128 characters anyway, so a cut name is still flagged). */
#define LAUNCHPROF__LINE_MAX 512

/* The hook descriptor, read once: -2 = not read yet, -1 = none. Each translation unit that
 * includes the header has its own copy, which costs one getenv per unit. */
static int launchprof__fd = -2;

static inline int launchprof__descriptor(void) {
    int fd = __atomic_load_n(&launchprof__fd, __ATOMIC_RELAXED);
    if (fd != -2) {
        return fd;
    }
    fd = -1;
    int saved = errno;
    const char *text = getenv("LAUNCHPROF_HOOK_FD");
    if (text != NULL && *text != '\0') {
        long value = 0;
        const char *p = text;
        while (*p >= '0' && *p <= '9' && value <= 1000000) {
            value = value * 10 + (*p - '0');
            p++;
        }
        /* Only a socket is ours: a stale variable naming a descriptor the program reused for a
         * file or a pipe must not get our lines. (launchprof passes a stream socket, which
         * queues lines however fast they come; datagram sockets queue only ten.) */
        int type = 0;
        socklen_t size = sizeof type;
        if (*p == '\0' && value <= 1000000 &&
            getsockopt((int)value, SOL_SOCKET, SO_TYPE, &type, &size) == 0 &&
            (type == SOCK_STREAM || type == SOCK_DGRAM)) {
            fd = (int)value;
        }
    }
    __atomic_store_n(&launchprof__fd, fd, __ATOMIC_RELAXED);
    errno = saved;
    return fd;
}

/* Appends `text` (up to its NUL or the buffer's end) and returns the new length. */
static inline size_t launchprof__append(char *line, size_t length, const char *text) {
    while (text != NULL && *text != '\0' && *text != '\n' && length < LAUNCHPROF__LINE_MAX - 1) {
        line[length++] = *text++;
    }
    return length;
}

#ifdef LAUNCHPROF_RECORD_STAMPS
/* For launchprof's own test fixtures only: the stamp of this thread's last event sent, so a
 * fixture's truth is exactly the time the hook reported (0 when nothing was sent). */
static __thread unsigned long long launchprof_last_stamp_ns;
#endif

static inline void launchprof__send(const char *kind, const char *name) {
    int fd = launchprof__descriptor();
    if (fd < 0) {
        return;
    }
    int saved = errno;
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        errno = saved;
        return;
    }
    unsigned long long ns =
        (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
#ifdef LAUNCHPROF_RECORD_STAMPS
    launchprof_last_stamp_ns = ns;
#endif
    char line[LAUNCHPROF__LINE_MAX];
    size_t length = launchprof__append(line, 0, kind);
    line[length++] = ' ';
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + ns % 10);
        ns /= 10;
    } while (ns != 0);
    while (count > 0) {
        line[length++] = digits[--count];
    }
    if (name != NULL) {
        line[length++] = ' ';
        length = launchprof__append(line, length, name);
    }
    line[length++] = '\n';
    (void)send(fd, line, length, MSG_DONTWAIT | MSG_NOSIGNAL);
    errno = saved;
}

/* `launchprof prewarm --freeze-at willFinishLaunching`: a prewarmed process (ActivePrewarm=1,
 * LAUNCHPROF_FREEZE_AT=willFinishLaunching) stops itself before that phase begins; launchprof
 * holds the stop and resumes it as the user's launch. Only under launchprof, only once. */
static int launchprof__froze = 0;

static inline int launchprof__equal(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static inline void launchprof__freeze_before(const char *phase) {
    if (launchprof__froze || phase == NULL || launchprof__descriptor() < 0) {
        return;
    }
    launchprof__froze = 1;
    int saved = errno;
    const char *point = getenv("LAUNCHPROF_FREEZE_AT");
    const char *prewarm = getenv("ActivePrewarm");
    if (point != NULL && prewarm != NULL && launchprof__equal(phase, point) &&
        launchprof__equal(prewarm, "1")) {
        (void)kill(getpid(), SIGSTOP);
    }
    errno = saved;
}

/* Starts the app phase `phase` ("willFinishLaunching", "restoreState", "didFinishLaunching", or
 * any name); end it with launchprof_end. */
static inline void launchprof_begin(const char *phase) {
    launchprof__freeze_before(phase);
    launchprof_usdt_begin(phase != NULL ? phase : "");
    launchprof__send("begin", phase != NULL ? phase : "");
}

/* Ends the app phase `phase` begun with launchprof_begin. */
static inline void launchprof_end(const char *phase) {
    launchprof_usdt_end(phase != NULL ? phase : "");
    launchprof__send("end", phase != NULL ? phase : "");
}

/* The app's first frame is on screen (or, for a program without one, it is ready for use). */
static inline void launchprof_first_frame(void) {
    launchprof_usdt_first_frame();
    launchprof__send("first-frame", NULL);
}

/* Launch goes on until task `task_id` finishes (like extendLaunchMeasurement(forTaskID:)). */
static inline void launchprof_extend_launch(const char *task_id) {
    launchprof_usdt_extend(task_id != NULL ? task_id : "");
    launchprof__send("extend", task_id != NULL ? task_id : "");
}

/* Task `task_id` finished (like finishExtendedLaunchMeasurement(forTaskID:)). */
static inline void launchprof_finish_extended_launch(const char *task_id) {
    launchprof_usdt_finish_extend(task_id != NULL ? task_id : "");
    launchprof__send("finish-extend", task_id != NULL ? task_id : "");
}

/* App-state transitions after the first frame, like UIApplicationDelegate's (`launchprof run
 * --resume-cycles K` sends them). Under launchprof only, launchprof_set_lifecycle_callback
 * installs handlers for the signals that carry them:
 *
 *   SIGUSR1  "willResignActive", then "didEnterBackground"
 *   SIGUSR2  "willEnterForeground", then "didBecomeActive"
 *   SIGTERM  "willTerminate", then the process ends by SIGTERM as it would have
 *
 * and calls `callback` with each event's name, timing each call as an app phase of that name
 * (all but willTerminate) so launchprof sees when the app is active again. The callback runs in
 * the signal handler: do only async-signal-safe work there (set a flag, write to a pipe). Call it
 * before launchprof_first_frame: launchprof may send the first transition right after. */
typedef void (*launchprof_lifecycle_callback)(const char *event);

static launchprof_lifecycle_callback launchprof__lifecycle = NULL;

static inline void launchprof__lifecycle_event(const char *event) {
    launchprof__send("begin", event);
    if (launchprof__lifecycle != NULL) {
        launchprof__lifecycle(event);
    }
    launchprof__send("end", event);
}

static inline void launchprof__on_lifecycle_signal(int number) {
    int saved = errno;
    if (number == SIGUSR1) {
        launchprof__lifecycle_event("willResignActive");
        launchprof__lifecycle_event("didEnterBackground");
    } else if (number == SIGUSR2) {
        launchprof__lifecycle_event("willEnterForeground");
        launchprof__lifecycle_event("didBecomeActive");
    } else if (number == SIGTERM) {
        if (launchprof__lifecycle != NULL) {
            launchprof__lifecycle("willTerminate");
        }
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
    }
    errno = saved;
}

static inline void launchprof_set_lifecycle_callback(launchprof_lifecycle_callback callback) {
    if (launchprof__descriptor() < 0) {
        return;
    }
    launchprof__lifecycle = callback;
    struct sigaction action;
    action.sa_handler = launchprof__on_lifecycle_signal;
    sigemptyset(&action.sa_mask);
#ifdef SA_RESTART
    action.sa_flags = SA_RESTART;
#else
    action.sa_flags = 0;
#endif
    sigaction(SIGUSR1, &action, NULL);
    sigaction(SIGUSR2, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
}

#ifdef __cplusplus
}
#endif

#endif /* LAUNCHPROF_H */
