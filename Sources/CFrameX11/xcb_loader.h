// libxcb and its DAMAGE and X-Resource bindings, loaded with dlopen when the observer first
// connects: launchprof itself runs on machines without them (a server with no X libraries), and
// only `--ready frame` on X11 needs them. Including this after the xcb headers makes every call
// below go through the loaded pointer.
#pragma once

#include <dlfcn.h>
#include <xcb/damage.h>
#include <xcb/res.h>
#include <xcb/xcb.h>

#define LP_XCB_CORE(X)                                                                            \
    X(xcb_change_window_attributes) X(xcb_change_window_attributes_checked) X(xcb_connect)        \
    X(xcb_connection_has_error) X(xcb_discard_reply) X(xcb_disconnect) X(xcb_flush)              \
    X(xcb_generate_id) X(xcb_get_extension_data) X(xcb_get_file_descriptor) X(xcb_get_input_focus) \
    X(xcb_get_property) X(xcb_get_property_reply) X(xcb_get_property_value)                      \
    X(xcb_get_property_value_length) X(xcb_get_setup) X(xcb_get_window_attributes)                \
    X(xcb_get_window_attributes_reply) X(xcb_intern_atom) X(xcb_intern_atom_reply)                \
    X(xcb_poll_for_event) X(xcb_request_check) X(xcb_screen_next) X(xcb_setup_roots_iterator)
#define LP_XCB_DAMAGE(X)                                                                          \
    X(xcb_damage_create) X(xcb_damage_destroy) X(xcb_damage_query_version)                       \
    X(xcb_damage_query_version_reply)
#define LP_XCB_RES(X)                                                                             \
    X(xcb_res_client_id_value_next) X(xcb_res_client_id_value_value) X(xcb_res_query_client_ids) \
    X(xcb_res_query_client_ids_ids_iterator) X(xcb_res_query_client_ids_reply)                   \
    X(xcb_res_query_version) X(xcb_res_query_version_reply)

#define LP_XCB_POINTER(name) static __typeof__(&name) lp_##name;
LP_XCB_CORE(LP_XCB_POINTER)
LP_XCB_DAMAGE(LP_XCB_POINTER)
LP_XCB_RES(LP_XCB_POINTER)
static xcb_extension_t *lp_xcb_damage_id, *lp_xcb_res_id;

/// Loads the three libraries once; returns the soname of the first one missing, or NULL.
static const char *lp_xcb_load(void) {
    static int loaded;
    static const char *missing;
    if (loaded) return missing;
    loaded = 1;
    void *core = dlopen("libxcb.so.1", RTLD_NOW | RTLD_LOCAL);
    void *damage = dlopen("libxcb-damage.so.0", RTLD_NOW | RTLD_LOCAL);
    void *res = dlopen("libxcb-res.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!core) return missing = "libxcb.so.1";
    if (!damage) return missing = "libxcb-damage.so.0";
    if (!res) return missing = "libxcb-res.so.0";
#define LP_XCB_LOAD_FROM(library, name) \
    if (!(lp_##name = (__typeof__(&name))dlsym(library, #name))) return missing = #name;
#define LP_XCB_LOAD_CORE(name) LP_XCB_LOAD_FROM(core, name)
#define LP_XCB_LOAD_DAMAGE(name) LP_XCB_LOAD_FROM(damage, name)
#define LP_XCB_LOAD_RES(name) LP_XCB_LOAD_FROM(res, name)
    LP_XCB_CORE(LP_XCB_LOAD_CORE)
    LP_XCB_DAMAGE(LP_XCB_LOAD_DAMAGE)
    LP_XCB_RES(LP_XCB_LOAD_RES)
    if (!(lp_xcb_damage_id = dlsym(damage, "xcb_damage_id"))) return missing = "xcb_damage_id";
    if (!(lp_xcb_res_id = dlsym(res, "xcb_res_id"))) return missing = "xcb_res_id";
    return NULL;
}

#define xcb_change_window_attributes (*lp_xcb_change_window_attributes)
#define xcb_change_window_attributes_checked (*lp_xcb_change_window_attributes_checked)
#define xcb_connect (*lp_xcb_connect)
#define xcb_connection_has_error (*lp_xcb_connection_has_error)
#define xcb_discard_reply (*lp_xcb_discard_reply)
#define xcb_disconnect (*lp_xcb_disconnect)
#define xcb_flush (*lp_xcb_flush)
#define xcb_generate_id (*lp_xcb_generate_id)
#define xcb_get_extension_data (*lp_xcb_get_extension_data)
#define xcb_get_file_descriptor (*lp_xcb_get_file_descriptor)
#define xcb_get_input_focus (*lp_xcb_get_input_focus)
#define xcb_get_property (*lp_xcb_get_property)
#define xcb_get_property_reply (*lp_xcb_get_property_reply)
#define xcb_get_property_value (*lp_xcb_get_property_value)
#define xcb_get_property_value_length (*lp_xcb_get_property_value_length)
#define xcb_get_setup (*lp_xcb_get_setup)
#define xcb_get_window_attributes (*lp_xcb_get_window_attributes)
#define xcb_get_window_attributes_reply (*lp_xcb_get_window_attributes_reply)
#define xcb_intern_atom (*lp_xcb_intern_atom)
#define xcb_intern_atom_reply (*lp_xcb_intern_atom_reply)
#define xcb_poll_for_event (*lp_xcb_poll_for_event)
#define xcb_request_check (*lp_xcb_request_check)
#define xcb_screen_next (*lp_xcb_screen_next)
#define xcb_setup_roots_iterator (*lp_xcb_setup_roots_iterator)
#define xcb_damage_create (*lp_xcb_damage_create)
#define xcb_damage_destroy (*lp_xcb_damage_destroy)
#define xcb_damage_query_version (*lp_xcb_damage_query_version)
#define xcb_damage_query_version_reply (*lp_xcb_damage_query_version_reply)
#define xcb_res_client_id_value_next (*lp_xcb_res_client_id_value_next)
#define xcb_res_client_id_value_value (*lp_xcb_res_client_id_value_value)
#define xcb_res_query_client_ids (*lp_xcb_res_query_client_ids)
#define xcb_res_query_client_ids_ids_iterator (*lp_xcb_res_query_client_ids_ids_iterator)
#define xcb_res_query_client_ids_reply (*lp_xcb_res_query_client_ids_reply)
#define xcb_res_query_version (*lp_xcb_res_query_version)
#define xcb_res_query_version_reply (*lp_xcb_res_query_version_reply)
#define xcb_damage_id (*lp_xcb_damage_id)
#define xcb_res_id (*lp_xcb_res_id)
