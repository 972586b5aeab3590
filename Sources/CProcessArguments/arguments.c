// The Swift runtime's two argument-vector entry points, defined here so that the static runtime's
// own (CommandLine.cpp.o in libswiftCore.a, which defines only these two) is not linked in: its
// constructor finds argv by reading /proc/self/maps line by line to locate the stack and walking
// back from `environ`: 65 µs at every start of launchprof, whose `inspect` answers from its cache in
// under 1 ms. glibc passes argc and argv to every constructor; this one keeps them.
//
// With a shared Swift runtime (debug builds) the runtime uses its own copies and these are unused:
// launchprof's symbols are not exported (Package.swift).
#include "CProcessArguments.h"

#include <stddef.h>

static char **startArguments;
static int startArgumentCount;
static char **overrideArguments;
static int overrideArgumentCount;

__attribute__((constructor)) static void keepArguments(int argc, char **argv) {
    startArguments = argv;
    startArgumentCount = argc;
}

__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (overrideArguments) {
        *outArgLen = overrideArgumentCount;
        return overrideArguments;
    }
    static char *noArguments[] = {NULL};
    if (!startArguments) {
        *outArgLen = 0;
        return noArguments;
    }
    *outArgLen = startArgumentCount;
    return startArguments;
}

void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    overrideArguments = argv;
    overrideArgumentCount = argc;
}
