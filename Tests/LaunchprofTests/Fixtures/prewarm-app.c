/*
 * prewarm-app: known work before main (a constructor, PW_INIT_US, default 30 ms) and after it
 * (PW_POST_US, default 20 ms, then the first frame). Truth lines (run-fixture.h) are named after
 * the launch reason, "prewarm" when ActivePrewarm=1, else "ordinary":
 *   ctor <reason> <begin> <end>, main <reason> <t> <t>, first-frame <reason> <main> <stamp>.
 * PW_HAZARDS=1 makes the constructor read the wall clock (clock_gettime, time) and connect to
 * 127.0.0.1:PW_PORT; PW_HAZARDS=2 starts a thread, calls getrandom, opens $HOME/settings.conf and
 * flocks it.
 */
#define LAUNCHPROF_RECORD_STAMPS
#include "launchprof.h"
#include "run-fixture.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

static const char *reason(void) {
    const char *value = getenv("ActivePrewarm");
    return value != NULL && strcmp(value, "1") == 0 ? "prewarm" : "ordinary";
}

__attribute__((noinline)) void stamp_wall_clock(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    __asm__ volatile("" : : "r"(now.tv_sec) : "memory");
}

__attribute__((noinline)) void stamp_epoch_seconds(void) {
    time_t now = time(NULL);
    __asm__ volatile("" : : "r"(now) : "memory");
}

__attribute__((noinline)) void open_telemetry_connection(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)lp_setting("PW_PORT", 9));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)!connect(fd, (struct sockaddr *)&address, sizeof address);
    close(fd);
}

static void *idle_thread(void *argument) { return argument; }

/* PW_HAZARDS=2: the other hazards, each from a function of its own. */
__attribute__((noinline)) void start_worker_thread(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, idle_thread, NULL) == 0) pthread_join(thread, NULL);
}

__attribute__((noinline)) void seed_random(void) {
    unsigned char seed[16];
    (void)!getrandom(seed, sizeof seed, 0);
}

__attribute__((noinline)) void read_user_settings(void) {
    const char *home = getenv("HOME");
    char path[512];
    if (home == NULL || strlen(home) > 400) return;
    strcpy(path, home);
    strcat(path, "/settings.conf");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!flock(fd, LOCK_SH);
        close(fd);
    }
}

__attribute__((constructor)) static void prewarm_app_init(void) {
    uint64_t begin = lp_now();
    if (lp_setting("PW_HAZARDS", 0) == 1) {
        stamp_wall_clock();
        stamp_epoch_seconds();
        open_telemetry_connection();
    }
    if (lp_setting("PW_HAZARDS", 0) == 2) {
        start_worker_thread();
        seed_random();
        read_user_settings();
    }
    lp_busy_us(lp_setting("PW_INIT_US", 30000));
    uint64_t end = lp_now();
    lp_truth("ctor", reason(), begin, end);
}

/* PW_LIFECYCLE=1: app-state transitions through the header; each event a truth line
 * "lifecycle <event> t t" written from the handler (open/write/close are async-signal-safe). */
static void on_lifecycle(const char *event) {
    uint64_t now = lp_now();
    lp_truth("lifecycle", event, now, now);
}

int main(void) {
    uint64_t start = lp_now();
    lp_truth("main", reason(), start, start);
    if (lp_setting("PW_HOOKED", 0) == 1) {
        launchprof_begin("willFinishLaunching");
        launchprof_end("willFinishLaunching");
    }
    lp_busy_us(lp_setting("PW_POST_US", 20000));
    int lifecycle = lp_setting("PW_LIFECYCLE", 0) == 1;
    if (lifecycle) {
        launchprof_set_lifecycle_callback(on_lifecycle);
    }
    launchprof_first_frame();
    lp_truth("first-frame", reason(), start, launchprof_last_stamp_ns);
    while (lifecycle) {
        pause(); /* until launchprof ends it (SIGTERM: willTerminate) */
    }
    return 0;
}
