// The Wayland relay (see CFrameWayland.h). The wire format: each message is the object id, then
// a word holding the size in bytes (high 16 bits) and the opcode (low 16), then the arguments;
// file descriptors travel beside the bytes as SCM_RIGHTS and are passed on unchanged.
#define _GNU_SOURCE
#include "CFrameWayland.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum object_type { NONE, REGISTRY, COMPOSITOR, WM_BASE, SURFACE, XDG_SURFACE, TOPLEVEL };
// MAX_FDS is the kernel's SCM_MAX_FD: one recvmsg never returns more, so none is ever cut off.
enum { MAX_OBJECTS = 1 << 16, MAX_CLIENTS = 64, MAX_FDS = 253, CHUNK = 16384 };

typedef struct {
    uint8_t type;
    uint8_t toplevel, buffer_pending, committed, framed;
    uint32_t surface;  // an xdg_surface's wl_surface
} object;

typedef struct {
    int client, compositor;
    int32_t pid;
    uint32_t launch;
    object *objects;
    // client → compositor bytes not yet parsed (a message split by reads); words, so that a
    // message is read where it lies (every message is a whole number of words)
    uint32_t in[(CHUNK + 8192) / 4];
    size_t in_length;
    uint32_t out[(CHUNK + 8192) / 4];  // compositor → client, for delete_id
    size_t out_length;
} connection;

struct lp_wl_relay {
    int listener;
    char listen_path[108];
    char compositor_path[108];
    uint32_t launch;
    connection clients[MAX_CLIENTS];
    int count;
};

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int lp_wl_relay_open(const char *listen_path, const char *compositor_path, lp_wl_relay **out) {
    *out = NULL;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(listen_path) >= sizeof address.sun_path || strlen(compositor_path) >= sizeof address.sun_path) {
        return ENAMETOOLONG;
    }
    lp_wl_relay *self = calloc(1, sizeof *self);
    if (!self) return ENOMEM;
    strcpy(self->listen_path, listen_path);
    strcpy(self->compositor_path, compositor_path);
    strcpy(address.sun_path, listen_path);
    self->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(listen_path);
    if (self->listener < 0 || bind(self->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(self->listener, 16) != 0) {
        int error = errno;
        if (self->listener >= 0) close(self->listener);
        free(self);
        return error;
    }
    *out = self;
    return 0;
}

void lp_wl_relay_begin_launch(lp_wl_relay *self) { self->launch++; }

static void drop(lp_wl_relay *self, int index) {
    connection *c = &self->clients[index];
    close(c->client);
    close(c->compositor);
    free(c->objects);
    self->clients[index] = self->clients[--self->count];
}

// Accepts a client and connects it to the compositor; false when either fails.
static int accept_client(lp_wl_relay *self) {
    int client = accept4(self->listener, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) return 0;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strcpy(address.sun_path, self->compositor_path);
    int compositor = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    object *objects = calloc(MAX_OBJECTS, sizeof *objects);
    if (self->count == MAX_CLIENTS || compositor < 0 || !objects ||
        connect(compositor, (struct sockaddr *)&address, sizeof address) != 0) {
        close(client);
        if (compositor >= 0) close(compositor);
        free(objects);
        return 0;
    }
    struct ucred credentials = {0};
    socklen_t length = sizeof credentials;
    getsockopt(client, SOL_SOCKET, SO_PEERCRED, &credentials, &length);
    objects[1].type = NONE;  // wl_display
    self->clients[self->count++] = (connection){
        .client = client, .compositor = compositor, .pid = credentials.pid, .launch = self->launch,
        .objects = objects};
    return 1;
}

static object *find(connection *c, uint32_t id) { return id < MAX_OBJECTS ? &c->objects[id] : NULL; }

static void set_type(connection *c, uint32_t id, uint8_t type) {
    object *o = find(c, id);
    if (o) *o = (object){.type = type};
}

static void emit(lp_wl_event *events, int *count, int max, int kind, connection *c, uint32_t surface, uint64_t at) {
    if (*count < max) {
        events[(*count)++] = (lp_wl_event){.kind = kind, .pid = c->pid, .surface = surface, .launch = c->launch, .at_ns = at};
    }
}

// One client request: follow the objects that lead to toplevel surfaces and their commits.
static void request(connection *c, const uint32_t *message, uint32_t size, uint64_t at, lp_wl_event *events, int *count, int max) {
    uint32_t id = message[0], opcode = message[1] & 0xffff, words = size / 4;
    const uint32_t *arguments = message + 2;
    uint32_t argc = words - 2;
    object *target = find(c, id);
    if (id == 1) {
        if (opcode == 1 && argc >= 1) set_type(c, arguments[0], REGISTRY);  // get_registry
        return;
    }
    if (!target) return;
    switch (target->type) {
    case REGISTRY:
        if (opcode == 0 && argc >= 2) {  // bind(name, interface, version, new_id)
            uint32_t length = arguments[1], padded = (length + 3) / 4;
            if (argc < 2 + padded + 2 || length == 0) return;
            const char *interface = (const char *)(arguments + 2);
            uint32_t new_id = arguments[2 + padded + 1];
            if (strncmp(interface, "wl_compositor", length) == 0) set_type(c, new_id, COMPOSITOR);
            else if (strncmp(interface, "xdg_wm_base", length) == 0) set_type(c, new_id, WM_BASE);
        }
        break;
    case COMPOSITOR:
        if (opcode == 0 && argc >= 1) set_type(c, arguments[0], SURFACE);  // create_surface
        break;
    case WM_BASE:
        if (opcode == 2 && argc >= 2) {  // get_xdg_surface(new_id, surface)
            set_type(c, arguments[0], XDG_SURFACE);
            object *o = find(c, arguments[0]);
            if (o) o->surface = arguments[1];
        }
        break;
    case XDG_SURFACE:
        if (opcode == 1 && argc >= 1) {  // get_toplevel(new_id)
            set_type(c, arguments[0], TOPLEVEL);
            object *surface = find(c, target->surface);
            if (surface && surface->type == SURFACE) surface->toplevel = 1;
        }
        break;
    case SURFACE:
        if (opcode == 1 && argc >= 1) {  // attach(buffer, x, y)
            target->buffer_pending = arguments[0] != 0;
        } else if (opcode == 6) {  // commit
            if (target->toplevel && !target->committed) {
                target->committed = 1;
                emit(events, count, max, LP_WL_TOPLEVEL_COMMITTED, c, id, at);
            }
            if (target->toplevel && target->buffer_pending && !target->framed) {
                target->framed = 1;
                emit(events, count, max, LP_WL_FIRST_FRAME, c, id, at);
            }
            target->buffer_pending = 0;
        }
        break;
    default:
        break;
    }
}

// Parses the complete messages in `buffer`; keeps a partial one for the next read.
static void parse(connection *c, uint8_t *buffer, size_t *length, int from_client, uint64_t at,
                  lp_wl_event *events, int *count, int max) {
    size_t offset = 0;
    while (*length - offset >= 8) {
        uint32_t header[2];
        memcpy(header, buffer + offset, 8);
        uint32_t size = header[1] >> 16;
        if (size < 8 || size % 4) {  // not the protocol: stop reading, keep relaying
            *length = 0;
            return;
        }
        if (*length - offset < size) break;
        const uint32_t *message = (const uint32_t *)(buffer + offset);
        if (from_client) {
            request(c, message, size, at, events, count, max);
        } else if (message[0] == 1 && (message[1] & 0xffff) == 1 && size >= 12) {
            set_type(c, message[2], NONE);  // wl_display.delete_id: the id may be reused
        }
        offset += size;
    }
    memmove(buffer, buffer + offset, *length - offset);
    *length -= offset;
}

// Moves what `from` has (bytes and descriptors) to `to`; false when `from` has closed.
static int relay(connection *c, int from, int to, int from_client, lp_wl_event *events, int *count, int max) {
    uint8_t bytes[CHUNK];
    union {
        char buffer[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } control;
    struct iovec vector = {bytes, sizeof bytes};
    struct msghdr header = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    ssize_t received = recvmsg(from, &header, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (received == 0 || (received < 0 && errno != EAGAIN && errno != EINTR)) return 0;
    if (received < 0) return 1;
    uint64_t at = monotonic_ns();
    int fds[MAX_FDS], fd_count = 0;
    for (struct cmsghdr *m = CMSG_FIRSTHDR(&header); m; m = CMSG_NXTHDR(&header, m)) {
        if (m->cmsg_level == SOL_SOCKET && m->cmsg_type == SCM_RIGHTS) {
            int n = (int)((m->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < n && fd_count < MAX_FDS; i++) memcpy(&fds[fd_count++], CMSG_DATA(m) + i * sizeof(int), sizeof(int));
        }
    }
    // Forward first (the compositor sees the request as soon as possible), then read it.
    struct iovec out_vector = {bytes, (size_t)received};
    struct msghdr out = {.msg_iov = &out_vector, .msg_iovlen = 1};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } out_control;
    if (fd_count) {
        out.msg_control = out_control.buffer;
        out.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
        struct cmsghdr *m = CMSG_FIRSTHDR(&out);
        m->cmsg_level = SOL_SOCKET;
        m->cmsg_type = SCM_RIGHTS;
        m->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
        memcpy(CMSG_DATA(m), fds, sizeof(int) * fd_count);
    }
    ssize_t sent = 0;
    while (sent < received) {
        out_vector.iov_base = bytes + sent;
        out_vector.iov_len = (size_t)(received - sent);
        ssize_t n = sendmsg(to, &out, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd wait = {to, POLLOUT, 0};
            poll(&wait, 1, -1);
            continue;
        }
        if (n <= 0) break;
        sent += n;
        out.msg_control = NULL;  // descriptors go with the first part only
        out.msg_controllen = 0;
    }
    for (int i = 0; i < fd_count; i++) close(fds[i]);
    if (sent < received) return 0;
    uint8_t *buffer = (uint8_t *)(from_client ? c->in : c->out);
    size_t *length = from_client ? &c->in_length : &c->out_length;
    if (*length + (size_t)received > sizeof c->in) {
        *length = 0;  // a message larger than the buffer: skip parsing it
        return 1;
    }
    memcpy(buffer + *length, bytes, (size_t)received);
    *length += (size_t)received;
    parse(c, buffer, length, from_client, at, events, count, max);
    return 1;
}

int lp_wl_relay_step(lp_wl_relay *self, int wake_fd, lp_wl_event *events, int max) {
    struct pollfd fds[2 + 2 * MAX_CLIENTS];
    int n = 0;
    fds[n++] = (struct pollfd){wake_fd, POLLIN, 0};
    fds[n++] = (struct pollfd){self->listener, POLLIN, 0};
    for (int i = 0; i < self->count; i++) {
        fds[n++] = (struct pollfd){self->clients[i].client, POLLIN, 0};
        fds[n++] = (struct pollfd){self->clients[i].compositor, POLLIN, 0};
    }
    if (poll(fds, (nfds_t)n, -1) < 0) return 0;
    if (fds[0].revents) return -1;
    int count = 0;
    // From the last, so dropping a connection (moving the last into its place) is safe.
    for (int i = self->count - 1; i >= 0; i--) {
        connection *c = &self->clients[i];
        int alive = 1;
        if (fds[2 + 2 * i].revents) alive = relay(c, c->client, c->compositor, 1, events, &count, max);
        if (alive && fds[3 + 2 * i].revents) alive = relay(c, c->compositor, c->client, 0, events, &count, max);
        if (!alive) drop(self, i);
    }
    if (fds[1].revents && accept_client(self)) {
        // The client wrote its first requests right after connecting: they are usually here
        // already, and passing them on now saves a wake-up of the relay on every launch.
        connection *c = &self->clients[self->count - 1];
        if (!relay(c, c->client, c->compositor, 1, events, &count, max)) drop(self, self->count - 1);
    }
    return count;
}

void lp_wl_relay_close(lp_wl_relay *self) {
    while (self->count > 0) drop(self, self->count - 1);
    close(self->listener);
    unlink(self->listen_path);
    free(self);
}
