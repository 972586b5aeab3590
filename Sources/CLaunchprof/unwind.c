// Remote unwinding through libunwind-ptrace. Its unw_* names are macros and _UPT_accessors is a
// mutable global, neither of which Swift can use directly.
#include "CLaunchprof.h"

#include <libunwind-ptrace.h>

int lp_unwind(pid_t tid, uint64_t *ips, int capacity, int *count) {
    *count = 0;
    unw_addr_space_t space = unw_create_addr_space(&_UPT_accessors, 0);
    if (!space) return -UNW_ENOMEM;
    void *context = _UPT_create(tid);
    if (!context) {
        unw_destroy_addr_space(space);
        return -UNW_ENOMEM;
    }
    unw_cursor_t cursor;
    int status = unw_init_remote(&cursor, space, context);
    while (status >= 0 && *count < capacity) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        ips[(*count)++] = ip;
        status = unw_step(&cursor);
        if (status <= 0) break;
    }
    _UPT_destroy(context);
    unw_destroy_addr_space(space);
    return status < 0 ? status : 0;
}
