// SwiftPM needs one source file per C target; the hooks themselves are header-only.
#include "launchprof.h"
