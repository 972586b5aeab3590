// Whether a program carries file capabilities (PrivilegedProgram.swift): sys/xattr.h is not in
// Swift's Glibc module.
#include <sys/xattr.h>

#include "CLaunchprof.h"

int lp_has_file_capabilities(const char *path) {
    return getxattr(path, "security.capability", NULL, 0) > 0;
}
