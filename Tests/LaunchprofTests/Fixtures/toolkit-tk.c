/*
 * A Tk program (C, no Tcl script of its own) that never calls launchprof: an interpreter, Tcl_Init
 * and Tk_Init (the main window), then LP_TK_SETUP_BUSY_US (30000) of set-up and a widget packed,
 * then Tk_MainLoop. Truth: "init Tk_Init <b> <e>" around Tk_Init, "setup setup <b> <e>" from its
 * return to just before Tk_MainLoop.
 */
#include "run-fixture.h"
#include <stdio.h>
#include <tk.h>
int main(int argc, char **argv) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    Tcl_FindExecutable(argv[0]);
    Tcl_Interp *interp = Tcl_CreateInterp();
    if (Tcl_Init(interp) != TCL_OK) {
        fprintf(stderr, "toolkit-tk: Tcl_Init: %s\n", Tcl_GetStringResult(interp));
        return 1;
    }
    uint64_t begin = lp_now();
    if (Tk_Init(interp) != TCL_OK) {
        fprintf(stderr, "toolkit-tk: Tk_Init: %s\n", Tcl_GetStringResult(interp));
        return 1;
    }
    uint64_t initialized = lp_now();
    lp_truth("init", "Tk_Init", begin, initialized);
    lp_busy_us(lp_setting("LP_TK_SETUP_BUSY_US", 30000));
    if (Tcl_Eval(interp, "wm geometry . 200x120; canvas .c -background #285aa0; pack .c -fill both -expand 1") != TCL_OK) {
        fprintf(stderr, "toolkit-tk: %s\n", Tcl_GetStringResult(interp));
        return 1;
    }
    lp_truth("setup", "setup", initialized, lp_now());
    Tk_MainLoop();
    return 0;
}
