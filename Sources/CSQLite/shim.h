// SQLite 3 (Debian: libsqlite3-dev), for launchprof monitor's store.
#include <sqlite3.h>
