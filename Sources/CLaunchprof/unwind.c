// Remote unwinding through libunwind-ptrace, loaded on first use. Its unw_* names are macros and
// _UPT_accessors is a mutable global, neither of which Swift can use directly.
// The static release build loads it the same way: glibc's dlopen from a static program maps the
// shared libc libunwind needs beside the program's own (they share nothing but the kernel).
#include "CLaunchprof.h"
#include "unwind_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static lp_unwind_library library;
static const char *missing;
static char missing_text[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    // libunwind-ptrace uses the generic unwinder's symbols (and Debian's, liblzma's) without
    // naming the libraries that define them: those go into the global scope first.
    void *generic = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_GLOBAL);
    if (!generic) {
        missing = "libunwind-x86_64.so.8";
        return;
    }
    void *ptrace = dlopen("libunwind-ptrace.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!ptrace) {
        missing = "libunwind-ptrace.so.0";
        return;
    }
#define LOAD(handle, field, symbol)                                    \
    if (!(library.field = (__typeof__(library.field))dlsym(handle, #symbol))) { \
        snprintf(missing_text, sizeof missing_text, "%s (in libunwind)", #symbol); \
        missing = missing_text;                                         \
        return;                                                         \
    }
    LOAD(generic, create_addr_space, _Ux86_64_create_addr_space)
    LOAD(generic, destroy_addr_space, _Ux86_64_destroy_addr_space)
    LOAD(generic, set_caching_policy, _Ux86_64_set_caching_policy)
    LOAD(generic, flush_cache, _Ux86_64_flush_cache)
    LOAD(generic, init_remote, _Ux86_64_init_remote)
    LOAD(generic, get_reg, _Ux86_64_get_reg)
    LOAD(generic, step, _Ux86_64_step)
    LOAD(generic, search_unwind_table, _Ux86_64_dwarf_search_unwind_table)
    LOAD(ptrace, upt_create, _UPT_create)
    LOAD(ptrace, upt_destroy, _UPT_destroy)
    LOAD(ptrace, upt_accessors, _UPT_accessors)
#undef LOAD
}

const lp_unwind_library *lp_unwind_library_get(void) {
    pthread_once(&load_once, load);
    return missing ? NULL : &library;
}

const char *lp_unwind_library_missing(void) {
    pthread_once(&load_once, load);
    return missing;
}

int lp_unwind(pid_t tid, uint64_t *ips, int capacity, int *count) {
    *count = 0;
    const lp_unwind_library *unwind = lp_unwind_library_get();
    if (!unwind) return -UNW_EUNSPEC;
    unw_addr_space_t space = unwind->create_addr_space(unwind->upt_accessors, 0);
    if (!space) return -UNW_ENOMEM;
    void *context = unwind->upt_create(tid);
    if (!context) {
        unwind->destroy_addr_space(space);
        return -UNW_ENOMEM;
    }
    unw_cursor_t cursor;
    int status = unwind->init_remote(&cursor, space, context);
    while (status >= 0 && *count < capacity) {
        unw_word_t ip = 0;
        if (unwind->get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        ips[(*count)++] = ip;
        status = unwind->step(&cursor);
        if (status <= 0) break;
    }
    unwind->upt_destroy(context);
    unwind->destroy_addr_space(space);
    return status < 0 ? status : 0;
}
