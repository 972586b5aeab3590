/*
 * An app with configurable work in its own constructor and in each hooked launch phase.
 *
 *   LP_PROGRAM_BUSY_US / LP_PROGRAM_SLEEP_US   the program's constructor (program.init)
 *   LP_PHASES      comma-separated name:busy_us:sleep_us, run in order, each inside
 *                  launchprof_begin/end (default: no phases)
 *   LP_TASKS       comma-separated id:us: extended-launch tasks, each on its own thread, extended
 *                  before the first frame; the thread works `us` (half blocking, half busy) and
 *                  finishes the task; its truth spans the extend call to the finish call
 * With a hook channel, the truth of hooked spans is the hooks' own stamps; without one, the
 * fixture's clock around the same calls.
 *   LP_FIRST_FRAME 1 (default) calls launchprof_first_frame after the phases; 0 never does
 *   LP_DRAW_US     busy work between the last phase and the first frame
 *   LP_EXIT_CODE   the exit status (default 0)
 *   LP_LINGER_US   blocking work after the first frame, before joining the tasks
 *
 * Libraries built from run-lib.c are linked with --no-as-needed, so the loader runs their
 * constructors (before this program's) without the program calling them.
 * Truth lines: ctor program, main, phase <name>, hook-call begin:<name> and end:<name>,
 * first-frame, task <id>, exit.
 */
#include "run-fixture.h"
/* The hooks record the stamp they sent, so the truth of a hooked span is the app's own clock
 * exactly as launchprof received it (no preemption gap between two clock reads). */
#define LAUNCHPROF_RECORD_STAMPS
#include "launchprof.h"

/* Calls a hook and returns its stamp, or the fixture's clock when no channel is open. */
#define LP_HOOK_STAMP(call, fallback) \
    (launchprof_last_stamp_ns = 0, (call), launchprof_last_stamp_ns != 0 ? launchprof_last_stamp_ns : (fallback))

#include <pthread.h>

/* The constructor's span is written from main, so no file I/O lands inside program.init. */
static uint64_t constructor_begin, constructor_end;

__attribute__((constructor)) static void lp_program_constructor(void) {
    constructor_begin = lp_now();
    lp_work("LP_PROGRAM", 0, 0);
    constructor_end = lp_now();
}

/* Truth "hook-call <kind>:<phase> <called> <returned>": the fixture's clock just before a hook
 * call and just after it, which bracket the hook's USDT probe wherever the thread was preempted
 * (the field monitor's probe times are checked against it). */
static void write_hook_call(int truth, const char *kind, const char *phase, uint64_t called, uint64_t returned) {
    char name[256];
    size_t kind_length = strlen(kind), phase_length = strlen(phase);
    if (kind_length + phase_length >= sizeof name) {
        return;
    }
    memcpy(name, kind, kind_length);
    memcpy(name + kind_length, phase, phase_length + 1);
    lp_truth_write(truth, "hook-call", name, called, returned);
}

struct task {
    char id[160];
    uint64_t us;
    uint64_t extended;
    pthread_t thread;
    int started;
};

/* The task's span is the app's own: from its extend call (on the main thread) to its finish
 * call; the thread does `us` of work in between, half blocking, half busy. */
static void *run_task(void *argument) {
    struct task *task = argument;
    lp_blocking_us(task->us / 2);
    lp_busy_us(task->us - task->us / 2);
    uint64_t end = LP_HOOK_STAMP(launchprof_finish_extended_launch(task->id), lp_now());
    lp_truth("task", task->id, task->extended, end);
    return NULL;
}

/* Splits "a:b:c,d:e:f" in place: returns the next item and advances *cursor. */
static char *next_item(char **cursor) {
    char *item = *cursor;
    if (item == NULL || *item == '\0') {
        return NULL;
    }
    char *comma = strchr(item, ',');
    if (comma != NULL) {
        *comma = '\0';
        *cursor = comma + 1;
    } else {
        *cursor = item + strlen(item);
    }
    return item;
}

static uint64_t field_us(char **cursor) {
    char *field = *cursor;
    if (field == NULL) {
        return 0;
    }
    char *colon = strchr(field, ':');
    if (colon != NULL) {
        *colon = '\0';
        *cursor = colon + 1;
    } else {
        *cursor = NULL;
    }
    uint64_t value = 0;
    for (char *p = field; *p >= '0' && *p <= '9'; p++) {
        value = value * 10 + (uint64_t)(*p - '0');
    }
    return value > 10000000 ? 10000000 : value;
}

int main(void) {
    uint64_t main_ns = lp_now();
    lp_truth("ctor", "program", constructor_begin, constructor_end);
    lp_truth("main", "-", main_ns, main_ns);

    /* Tasks are described first so they can start inside the phases' time: before the frame. */
    static struct task tasks[32];
    int task_count = 0;
    const char *task_text = getenv("LP_TASKS");
    char task_buffer[4096];
    if (task_text != NULL && strlen(task_text) < sizeof task_buffer) {
        strcpy(task_buffer, task_text);
        char *cursor = task_buffer;
        char *item;
        while (task_count < 32 && (item = next_item(&cursor)) != NULL) {
            char *fields = strchr(item, ':');
            if (fields != NULL) {
                *fields = '\0';
                fields++;
            }
            struct task *task = &tasks[task_count++];
            strncpy(task->id, item, sizeof task->id - 1);
            task->us = field_us(&fields);
        }
    }
    for (int i = 0; i < task_count; i++) {
        tasks[i].extended = LP_HOOK_STAMP(launchprof_extend_launch(tasks[i].id), lp_now());
        tasks[i].started = pthread_create(&tasks[i].thread, NULL, run_task, &tasks[i]) == 0;
    }

    const char *phase_text = getenv("LP_PHASES");
    char phase_buffer[4096];
    if (phase_text != NULL && strlen(phase_text) < sizeof phase_buffer) {
        strcpy(phase_buffer, phase_text);
        char *cursor = phase_buffer;
        char *item;
        while ((item = next_item(&cursor)) != NULL) {
            char *fields = strchr(item, ':');
            if (fields != NULL) {
                *fields = '\0';
                fields++;
            }
            uint64_t busy = field_us(&fields);
            uint64_t sleep = field_us(&fields);
            int truth = lp_truth_open();
            uint64_t begin_called = lp_now();
            uint64_t begin = LP_HOOK_STAMP(launchprof_begin(item), lp_now());
            uint64_t begin_returned = lp_now();
            lp_busy_us(busy);
            lp_blocking_us(sleep);
            uint64_t end_called = lp_now();
            uint64_t end = LP_HOOK_STAMP(launchprof_end(item), lp_now());
            uint64_t end_returned = lp_now();
            lp_truth_write(truth, "phase", item, begin, end);
            write_hook_call(truth, "begin:", item, begin_called, begin_returned);
            write_hook_call(truth, "end:", item, end_called, end_returned);
            if (truth >= 0) {
                close(truth);
            }
        }
    }

    lp_busy_us(lp_setting("LP_DRAW_US", 0));
    if (lp_setting("LP_FIRST_FRAME", 1) == 1) {
        int truth = lp_truth_open();
        uint64_t frame = LP_HOOK_STAMP(launchprof_first_frame(), lp_now());
        lp_truth_write(truth, "first-frame", "-", frame, frame);
        if (truth >= 0) {
            close(truth);
        }
    }
    lp_blocking_us(lp_setting("LP_LINGER_US", 0));
    for (int i = 0; i < task_count; i++) {
        if (tasks[i].started) {
            pthread_join(tasks[i].thread, NULL);
        } else {
            run_task(&tasks[i]);
        }
    }
    int code = (int)lp_setting("LP_EXIT_CODE", 0);
    uint64_t exit_ns = lp_now();
    lp_truth("exit", "-", exit_ns, exit_ns);
    return code;
}
