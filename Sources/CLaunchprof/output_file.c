// An output file without a name until it is complete (AtomicReportFile.swift): O_TMPFILE is a
// GNU flag Swift's Glibc module does not show.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>

#include "CLaunchprof.h"

int lp_open_unnamed_file(const char *directory, unsigned int mode) {
    int fd = open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
    return fd >= 0 ? fd : -errno;
}
