/* The leaf library of the path fixtures. */
int elf_leaf_value(void) {
    return 41;
}
