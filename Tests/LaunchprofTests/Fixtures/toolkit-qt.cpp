// A Qt application (the same source for Qt 5 and Qt 6) that never calls launchprof: the
// QApplication constructor, then LP_QT_SETUP_BUSY_US (30000) of set-up and a window shown, then
// exec(). Truth: "construct QApplication <b> <e>" around the constructor, "setup setup <b> <e>"
// from its return to just before exec().
#include "run-fixture.h"
#include <QApplication>
#include <QWidget>
#include <QTimer>
int main(int argc, char **argv) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    uint64_t begin = lp_now();
    QApplication app(argc, argv);
    uint64_t constructed = lp_now();
    lp_truth("construct", "QApplication", begin, constructed);
    lp_busy_us(lp_setting("LP_QT_SETUP_BUSY_US", 30000));
    QWidget window;
    window.resize(200, 120);
    window.show();
    lp_truth("setup", "setup", constructed, lp_now());
    return app.exec();
}
