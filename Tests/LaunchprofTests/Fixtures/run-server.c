/*
 * A server: LP_SERVER_BUSY_US / LP_SERVER_SLEEP_US of start-up work, then it listens on
 * 127.0.0.1:0, prints "listening on 127.0.0.1:<port>" on stdout (flushed) and waits for a
 * connection or LP_SERVER_LINGER_US (default 5 s, so a lost server ends by itself), then exits 0.
 * Truth: "main - t t" at main, "listen - <ns-after-listen> <same>".
 */
#include "run-fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>

int main(void) {
    uint64_t main_ns = lp_now();
    lp_truth("main", "-", main_ns, main_ns);
    lp_work("LP_SERVER", 0, 0);
    int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (server < 0) {
        perror("socket");
        return 2;
    }
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (bind(server, (struct sockaddr *)&address, sizeof address) != 0 || listen(server, 8) != 0 ||
        getsockname(server, (struct sockaddr *)&address, &size) != 0) {
        perror("bind/listen");
        return 2;
    }
    uint64_t listening = lp_now();
    lp_truth("listen", "-", listening, listening);
    printf("listening on 127.0.0.1:%d\n", ntohs(address.sin_port));
    fflush(stdout);
    struct pollfd wait_for = {server, POLLIN, 0};
    (void)poll(&wait_for, 1, (int)(lp_setting("LP_SERVER_LINGER_US", 5000000) / 1000));
    return 0;
}
