// The run monitor's wait: an epoll set the tracer's thread adds a launch's descriptors to without
// waking the monitor's thread, and a timerfd for the launch's deadline.
#define _GNU_SOURCE
#include "CLaunchprof.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

int lp_epoll_create(int *fd) {
    int result = epoll_create1(EPOLL_CLOEXEC);
    if (result < 0) return errno;
    *fd = result;
    return 0;
}

int lp_epoll_add(int epoll_fd, int fd, bool once) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN | (once ? EPOLLONESHOT : 0);
    event.data.fd = fd;
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0 ? 0 : errno;
}

int lp_epoll_remove(int epoll_fd, int fd) {
    return epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL) == 0 ? 0 : errno;
}

int lp_epoll_wait(int epoll_fd, int *ready, int capacity) {
    struct epoll_event events[16];
    if (capacity > 16) capacity = 16;
    for (;;) {
        int count = epoll_wait(epoll_fd, events, capacity, -1);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) return -errno;
        for (int i = 0; i < count; i++) ready[i] = events[i].data.fd;
        return count;
    }
}

int lp_timer_create(int *fd) {
    int result = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (result < 0) return errno;
    *fd = result;
    return 0;
}

int lp_timer_set(int fd, uint64_t deadline_ns) {
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    // 0 disarms; a deadline already past fires at once (it_value must not be all zero).
    if (deadline_ns != 0) {
        when.it_value.tv_sec = (time_t)(deadline_ns / 1000000000u);
        when.it_value.tv_nsec = (long)(deadline_ns % 1000000000u);
    }
    // Setting the timer also clears an expiry not read yet (the kernel resets its count).
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &when, NULL) == 0 ? 0 : errno;
}
