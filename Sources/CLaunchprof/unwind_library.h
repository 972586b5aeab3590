// libunwind's remote unwinder (libunwind-x86_64), loaded with dlopen the first time a stack is
// unwound: loading it (and the liblzma it uses) at start-up is a fifth of the cost of starting
// launchprof, which `inspect` and most runs pay for nothing. Private to CLaunchprof.
#pragma once

#include <libunwind.h>

// The remote variant of libunwind's table search; libunwind exports it but declares it only in
// its private headers.
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t, unw_word_t, unw_dyn_info_t *,
                                              unw_proc_info_t *, int, void *);

/// The functions launchprof calls, by the names libunwind's headers map its `unw_*` API to.
typedef struct lp_unwind_library {
    __typeof__(&unw_create_addr_space) create_addr_space;
    __typeof__(&unw_destroy_addr_space) destroy_addr_space;
    __typeof__(&unw_set_caching_policy) set_caching_policy;
    __typeof__(&unw_flush_cache) flush_cache;
    __typeof__(&unw_init_remote) init_remote;
    __typeof__(&unw_get_reg) get_reg;
    __typeof__(&unw_step) step;
    __typeof__(&_Ux86_64_dwarf_search_unwind_table) search_unwind_table;
} lp_unwind_library;

/// The loaded library, or NULL when it cannot be loaded (lp_unwind_library_missing says why).
const lp_unwind_library *lp_unwind_library_get(void);
