/*
 * A plain xcb client: one top-level window (with a border and a background pixel, so the X
 * server paints both when it maps it), mapped, and after its first Expose and
 * FRAME_DRAW_US of busy work (default 20000) one filled rectangle: its first frame. Truth
 * (run-fixture.h): "main", and "first-frame x11 B E": B read just before the drawing request, E
 * after xcb_flush and a round trip (GetInputFocus's reply), so the server has drawn it by E. Then it waits for events until it
 * is killed. FRAME_WINDOWS=0 makes it a display client that never maps a window; FRAME_EXIT=1
 * makes it exit right after its first frame (the overhead benchmark compares readiness modes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <xcb/xcb.h>

#include "run-fixture.h"

int main(void) {
    uint64_t started = lp_now();
    lp_truth("main", "main", started, started);
    xcb_connection_t *connection = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(connection)) {
        fprintf(stderr, "frame-x11: cannot connect to $DISPLAY\n");
        return 2;
    }
    xcb_screen_t *screen = xcb_setup_roots_iterator(xcb_get_setup(connection)).data;
    xcb_window_t window = xcb_generate_id(connection);
    uint32_t values[] = {screen->white_pixel, screen->black_pixel, XCB_EVENT_MASK_EXPOSURE};
    xcb_create_window(connection, XCB_COPY_FROM_PARENT, window, screen->root, 10, 10, 320, 240, 1,
                      XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual,
                      XCB_CW_BACK_PIXEL | XCB_CW_BORDER_PIXEL | XCB_CW_EVENT_MASK, values);
    xcb_gcontext_t gc = xcb_generate_id(connection);
    uint32_t foreground = screen->black_pixel;
    xcb_create_gc(connection, gc, window, XCB_GC_FOREGROUND, &foreground);
    if (lp_setting("FRAME_WINDOWS", 1) > 0) xcb_map_window(connection, window);
    xcb_flush(connection);

    int drawn = 0;
    xcb_generic_event_t *event;
    while ((event = xcb_wait_for_event(connection))) {
        if ((event->response_type & 0x7f) == XCB_EXPOSE && !drawn) {
            lp_busy_us(lp_setting("FRAME_DRAW_US", 20000));
            uint64_t sending = lp_now();
            xcb_rectangle_t rectangle = {40, 40, 200, 120};
            xcb_poly_fill_rectangle(connection, window, gc, 1, &rectangle);
            xcb_flush(connection);
            free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), NULL));
            uint64_t shown = lp_now();
            lp_truth("first-frame", "x11", sending, shown);
            drawn = 1;
            if (lp_setting("FRAME_EXIT", 0) > 0) break;
        }
        free(event);
    }
    return 0;
}
