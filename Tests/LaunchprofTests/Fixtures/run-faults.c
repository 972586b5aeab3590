/*
 * Reports its own page faults as the kernel counts them (getrusage), at the very end of its
 * life: nothing after the count but the write of it and _exit, through code and stack touched
 * before the count, so the kernel's count when launchprof reaps the process is the reported
 * one exactly. It reads a byte 2 MB into its own file first: exec reads the file's start into
 * the page cache, and launchprof's analysis its end (the section headers), so only a page in
 * the middle of a 4 MB array is sure to take a major fault when the file was dropped.
 * Truth: "faults <major>-<minor> t t".
 */
#include "run-fixture.h"

#include <sys/resource.h>

static const volatile char far_page[4 << 20] = {1};

int main(void) {
    char name[48];
    (void)far_page[sizeof far_page / 2];
    /* _exit's code page, mapped now by a read so that calling it takes no fault. */
    (void)*(const volatile char *)&_exit;
    /* A first write, to /dev/null, touches every page the real one will. */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int truth = lp_truth_open();
    size_t length = lp_append_number(name, 0, 12345678901234567ull);
    name[length++] = '-';
    length = lp_append_number(name, length, 12345678901234567ull);
    name[length] = '\0';
    lp_truth_write(null, "faults", name, 1, 1);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    length = lp_append_number(name, 0, (uint64_t)usage.ru_majflt);
    name[length++] = '-';
    length = lp_append_number(name, length, (uint64_t)usage.ru_minflt);
    name[length] = '\0';
    lp_truth_write(truth, "faults", name, 1, 1);
    _exit(0);
}
