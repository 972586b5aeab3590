/*
 * A GTK 4 GtkApplication that never calls launchprof: its startup handler spins
 * LP_GTK_STARTUP_BUSY_US (20000), its activate handler LP_GTK_ACTIVATE_BUSY_US (30000) and then
 * presents a window. Truth as toolkit-gtk3.c: "register register <b> <e>" around
 * g_application_register (the startup emission), "activate-handler activate <b> <e>" from the
 * activate handler's start to the window presented, "startup-handler" around startup's work.
 */
#include "run-fixture.h"
#include <gtk/gtk.h>
static void on_startup(GApplication *app, gpointer data) {
    uint64_t begin = lp_now();
    lp_busy_us(lp_setting("LP_GTK_STARTUP_BUSY_US", 20000));
    lp_truth("startup-handler", "startup", begin, lp_now());
}
static void on_activate(GApplication *app, gpointer data) {
    uint64_t begin = lp_now();
    lp_busy_us(lp_setting("LP_GTK_ACTIVATE_BUSY_US", 30000));
    GtkWidget *window = gtk_application_window_new(GTK_APPLICATION(app));
    gtk_window_set_default_size(GTK_WINDOW(window), 200, 120);
    gtk_window_present(GTK_WINDOW(window));
    lp_truth("activate-handler", "activate", begin, lp_now());
}
int main(int argc, char **argv) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    GtkApplication *app = gtk_application_new("dev.launchprof.ToolkitGtk4", G_APPLICATION_NON_UNIQUE);
    g_signal_connect(app, "startup", G_CALLBACK(on_startup), NULL);
    g_signal_connect(app, "activate", G_CALLBACK(on_activate), NULL);
    uint64_t begin = lp_now();
    g_application_register(G_APPLICATION(app), NULL, NULL);
    lp_truth("register", "register", begin, lp_now());
    int status = g_application_run(G_APPLICATION(app), argc, argv);
    g_object_unref(app);
    return status;
}
