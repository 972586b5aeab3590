/* Calls the generated library whose many constructors ran before main; exits 0 when all did. */
int elf_constructors_run(void);
int elf_constructor_count(void);

int main(void) {
    return elf_constructors_run() == elf_constructor_count() ? 0 : 1;
}
