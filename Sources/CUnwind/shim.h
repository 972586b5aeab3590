#include <libunwind-ptrace.h>
