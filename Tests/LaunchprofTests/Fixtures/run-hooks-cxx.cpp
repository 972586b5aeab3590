// The hooks from C++: the header must compile warning-free as C++ and behave as in C.
#include "launchprof.h"

#include <cerrno>

int main() {
    errno = 77;
    launchprof_begin("cxxPhase");
    launchprof_end("cxxPhase");
    launchprof_extend_launch("cxx-task");
    launchprof_finish_extended_launch("cxx-task");
    launchprof_first_frame();
    return errno == 77 ? 0 : 1;
}
