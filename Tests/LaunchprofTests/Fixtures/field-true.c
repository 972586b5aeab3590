/* /bin/true's equivalent, of the tests' own: a watched program with nothing but a main, launched
   by the thousand (a probe on the system's /bin/true would be every user's cost). */
int main(void) {
    return 0;
}
