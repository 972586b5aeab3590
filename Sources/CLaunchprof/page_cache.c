// `--cold`'s eviction (PageCache.swift): sync_file_range is a GNU call Swift's Glibc module does
// not show.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

#include "CLaunchprof.h"

int lp_write_back(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) == 0
        ? 0 : errno;
}
