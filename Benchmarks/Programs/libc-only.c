/* The tracer-overhead subject: a dynamically linked program that needs only libc, does a
 * little stdio and exits. Profiled and bare launches of it are compared. */
#include <stdio.h>

int main(int argc, char **argv) {
    (void)argv;
    printf("hello from a libc-only program (%d)\n", argc);
    return 0;
}
