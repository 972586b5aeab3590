/* The middle library: needed by the program, itself needing the leaf library. */
int elf_leaf_value(void);

int elf_dep_value(void) {
    return elf_leaf_value() + 1;
}
