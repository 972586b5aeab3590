// What installing uprobes into a new mapping costs: maps a file executable (as exec and the
// loader do) and unmaps it, in batches, for a probed file and a byte-identical copy of it (another
// inode: no probe). The kernel installs the probed file's uprobes into each new mapping
// (uprobe_mmap: a private copy of every probed page); the difference per map+unmap is that cost.
// The fastest batch of each counts, so a loaded machine's preemptions do not.
//
//   uprobe-install PROBED COPY   → one line: ns per map of each, and the difference
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BATCHES = 15, MAPS = 200 };

static unsigned long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

// The fastest batch's ns per map+unmap of `path`, or 0 on an error (printed).
static unsigned long long per_map(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) { perror(path); return 0; }
    unsigned long long best = ~0ull;
    for (int b = 0; b < BATCHES; b++) {
        unsigned long long start = now_ns();
        for (int i = 0; i < MAPS; i++) {
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) { perror("mmap"); close(fd); return 0; }
            munmap(p, (size_t)st.st_size);
        }
        unsigned long long each = (now_ns() - start) / MAPS;
        if (each < best) best = each;
    }
    close(fd);
    return best;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: uprobe-install PROBED COPY\n"); return 2; }
    unsigned long long probed = per_map(argv[1]), copy = per_map(argv[2]);
    if (!probed || !copy) return 1;
    // Again, alternating, so a slow spell does not fall on one side only.
    unsigned long long probed2 = per_map(argv[1]), copy2 = per_map(argv[2]);
    if (probed2 < probed) probed = probed2;
    if (copy2 < copy) copy = copy2;
    printf("map+unmap %s: %llu ns, its copy: %llu ns, probes installed: %lld ns\n", argv[1], probed, copy,
           (long long)probed - (long long)copy);
    return 0;
}
