/* Linked with -static: no interpreter, no dynamic loader work. */
#include <stdio.h>

int main(void) {
    puts("static");
    return 0;
}
