/* A program whose only job is to call into its library, so the loader must resolve it. */
int elf_dep_value(void);

int main(void) {
    return elf_dep_value() == 42 ? 0 : 1;
}
