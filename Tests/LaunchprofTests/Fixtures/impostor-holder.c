// Someone else's process listening where launchprof looks for its uprobe holder: it answers
// whatever it reads with "1 1 1\n" (the old text protocol's calibration of 1 ns per hit and
// stop), so a launchprof that trusted it would print its figures. Listens on the socket path in argv[1], or
// (without arguments) on the bound socket it is given as its standard input. On SIGTERM it
// prints "connections N bytes M" (what it was sent) and exits.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static void stop(int signal) { (void)signal; stopping = 1; }

int main(int argc, char **argv) {
    int listener = 0;
    if (argc > 1) {
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
        listener = socket(AF_UNIX, SOCK_STREAM, 0);
        unlink(argv[1]);
        if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) { perror("bind"); return 1; }
    }
    if (listen(listener, 16) != 0) { perror("listen"); return 1; }
    struct sigaction action = {.sa_handler = stop};
    sigaction(SIGTERM, &action, NULL);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &term, NULL);  // a test runner's spawn may hand it blocked
    printf("listening\n");
    fflush(stdout);
    long connections = 0, bytes = 0;
    struct pollfd fds[32];
    int count = 1;
    fds[0] = (struct pollfd){listener, POLLIN, 0};
    while (!stopping) {
        if (poll(fds, (nfds_t)count, -1) < 0) continue;
        if ((fds[0].revents & POLLIN) && count < 32) {
            int client = accept(listener, NULL, NULL);
            if (client >= 0) {
                connections++;
                fds[count++] = (struct pollfd){client, POLLIN, 0};
            }
        }
        for (int i = 1; i < count; i++) {
            if (!fds[i].revents) continue;
            char buffer[4096];
            ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i--] = fds[--count];
                continue;
            }
            bytes += got;
            const char *reply = "1 1 1\n";
            if (write(fds[i].fd, reply, strlen(reply)) < 0) {}
        }
    }
    printf("connections %ld bytes %ld\n", connections, bytes);
    return 0;
}
