/* rein's native helper for warm node hooks (see src/hooks/warm.rs and boot.cjs).
 *
 * Node cannot fork from JavaScript, and a forked node needs care: V8 marks its heap
 * "do not copy on fork", and the child has none of the parent's threads, so node's own exit
 * (which joins them and drains their tasks) would crash or hang. This module, loaded by
 * boot.cjs with process.dlopen, does three things:
 *
 *   serve()  makes the interpreter a forking server, as warm_boot/sitecustomize.py does for
 *            python (the same protocol with rein: calls on fd 0, a Unix packet socket, with
 *            their three pipes attached; "P <call> <pid> <group>", "X <call> <status>",
 *            "E <call>"). It returns only in a call's process, with the call's go message,
 *            after putting the call's pipes on fds 0-2 and re-making libuv's loop.
 *   arm(process)  in the call's process, ends it as node's exit would, without node's
 *            teardown: when the loop has nothing left it emits 'beforeExit' and 'exit' as
 *            node does, then _exit()s; after an uncaught exception node prints it and runs
 *            its AtExit callbacks, where this module _exit()s with node's code.
 *   exit(n)  _exit(n), for process.reallyExit (what process.exit ends in).
 *   ids()    "pid ppid seed": the call's own pid and parent, and a seed for Math.random.
 *
 * Written in C because node loads native code only as a shared object; it is built by
 * build.rs with the C compiler Rust links with, against libc's headers and nothing else (the
 * few Node-API and libuv functions it calls are declared here and resolved in the node binary).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Node-API, as node exports it (node_api.h's stable C ABI). */
typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_ref__ *napi_ref;
typedef struct napi_callback_info__ *napi_callback_info;
typedef struct napi_handle_scope__ *napi_handle_scope;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);
napi_status napi_create_string_utf8(napi_env, const char *, size_t, napi_value *);
napi_status napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
napi_status napi_get_value_int32(napi_env, napi_value, int32_t *);
napi_status napi_create_reference(napi_env, napi_value, uint32_t, napi_ref *);
napi_status napi_get_reference_value(napi_env, napi_ref, napi_value *);
napi_status napi_open_handle_scope(napi_env, napi_handle_scope *);
napi_status napi_close_handle_scope(napi_env, napi_handle_scope);
napi_status napi_throw_error(napi_env, const char *, const char *);
napi_status napi_create_int32(napi_env, int32_t, napi_value *);
napi_status napi_get_boolean(napi_env, int, napi_value *);
napi_status napi_get_value_bool(napi_env, napi_value, int *);
napi_status napi_get_named_property(napi_env, napi_value, const char *, napi_value *);
napi_status napi_coerce_to_number(napi_env, napi_value, napi_value *);
typedef enum {
    napi_undefined,
    napi_null,
    napi_boolean,
    napi_number,
    napi_string,
    napi_symbol,
    napi_object,
    napi_function,
    napi_external,
    napi_bigint
} napi_valuetype;
napi_status napi_typeof(napi_env, napi_value, napi_valuetype *);

/* libuv, as node exports it. */
void *uv_default_loop(void);
int uv_loop_fork(void *);
int uv_loop_alive(const void *);
int uv_prepare_init(void *, void *);
int uv_prepare_start(void *, void (*)(void *));
void uv_ref(void *);
void uv_unref(void *);

/* Node's and V8's C++ functions, found at run time (a node without them serves nothing). */
typedef void *(*isolate_current_fn)(void);
typedef void *(*isolate_context_fn)(void *);
typedef void *(*environment_of_fn)(void *);
typedef void (*at_exit_fn)(void *, void (*)(void *), void *);
/* node::MakeCallback(isolate, recv, method, argc, argv): a napi_value is a v8::Local. */
typedef void *(*make_callback_fn)(void *, napi_value, const char *, int, napi_value *);
static make_callback_fn make_callback;
static isolate_current_fn isolate_current;
static isolate_context_fn isolate_context;
static environment_of_fn environment_of;
static at_exit_fn at_exit;

#define GONE 77
#define MAX_PIDS 256
#define MAX_RANGES 4096
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pages a call wrote to (copied from the server's on its first write, one fault each),
 * as the first call reported them: each waiter copies them ahead of its call, while it waits,
 * so that the call does not fault on them. */
struct range {
    unsigned long start, len;
};
static struct range learned[MAX_RANGES];
static int n_learned;
/* In a call's process: report the pages it wrote to (the server has no list yet). */
static int learn_wanted;
static int learn_asked;

static int sock = 0;
/* In a call's process: the server's channel, to say the call's end before the process goes. */
static int report_fd = -1;
static int wake_r = -1, wake_w = -1, ctl_r = -1, ctl_w = -1;
static struct sigaction old_chld;

struct call {
    pid_t pid;
    long long id;
    int stderr_fd;
};
static pid_t coming[MAX_PIDS], leaders[MAX_PIDS], waiters[MAX_PIDS];
static int n_coming, n_leaders, n_waiters;
static struct call calls[MAX_PIDS];
static int n_calls;
/* Waiters lost in a row (killed before a call came); a call's end clears it. */
static int strikes;

static int take(pid_t *set, int *n, pid_t pid) {
    for (int i = 0; i < *n; i++)
        if (set[i] == pid) {
            set[i] = set[--*n];
            return 1;
        }
    return 0;
}

static void put(pid_t *set, int *n, pid_t pid) {
    if (*n < MAX_PIDS)
        set[(*n)++] = pid;
}

static int call_index(pid_t pid) {
    for (int i = 0; i < n_calls; i++)
        if (calls[i].pid == pid)
            return i;
    return -1;
}

static void send_text(const char *text) {
    if (send(sock, text, strlen(text), MSG_NOSIGNAL) < 0)
        _exit(0); /* rein is gone: the call's run is over for it too. */
}

static void on_chld(int signum) {
    (void)signum;
    int saved = errno;
    if (write(wake_w, "c", 1) < 0) {
        /* Full: a wake-up is pending already. */
    }
    errno = saved;
}

/* V8 marks its heap pages "do not copy on fork" (MADV_DONTFORK); a child without them
 * crashes at once. The server's memory is the call's, as a fork's is. */
static void copy_on_fork(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx", &start, &end) == 2)
            madvise((void *)start, end - start, MADV_DOFORK);
        /* A line longer than the buffer: skip the rest of it. */
        while (!strchr(line, '\n') && fgets(line, sizeof line, maps)) {
        }
    }
    fclose(maps);
}

/* The last top-level "id": <digits> of the go message (rein writes it last; a key inside
 * "set" has a string value, never digits). */
static long long go_id(const char *text, size_t len) {
    long long id = -1;
    for (size_t i = 0; i + 5 < len; i++) {
        if (memcmp(text + i, "\"id\":", 5) != 0)
            continue;
        size_t at = i + 5;
        while (at < len && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n'))
            at++;
        if (at < len && text[at] >= '0' && text[at] <= '9')
            id = strtoll(text + at, NULL, 10);
    }
    return id;
}

static int fds_of(struct msghdr *msg, int *fds, int max) {
    int n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *got = (int *)CMSG_DATA(c);
        for (int i = 0; i < count; i++) {
            if (n < max)
                fds[n++] = got[i];
            else
                close(got[i]);
        }
    }
    return n;
}

/* The call's process, forked ahead: it waits for one call on rein's socket, says its pid and
 * group to rein, hands its stderr to the server (for the words a shell writes when a signal
 * ends its child), and becomes the call. Returns the go message (malloc'd, NUL-ended). */
static char *waiter(void) {
    close(ctl_r);
    sigaction(SIGCHLD, &old_chld, NULL);
    /* The loop's kernel objects are the server's; the call's process gets its own. */
    uv_loop_fork(uv_default_loop());
    for (int i = 0; i < n_learned; i++)
        madvise((void *)learned[i].start, learned[i].len, MADV_POPULATE_WRITE);
    size_t cap = 1 << 20;
    char *text = malloc(cap + 1);
    if (!text)
        _exit(1);
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {text, cap};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    ssize_t got;
    do
        got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got <= 0)
        _exit(GONE); /* rein is gone: the server ends too. */
    text[got] = 0;
    int fds[3];
    int nfds = fds_of(&msg, fds, 3);
    long long id = go_id(text, (size_t)got);
    char line[96];
    if (nfds != 3 || id < 0) {
        snprintf(line, sizeof line, "E %lld", id);
        send_text(line);
        _exit(0);
    }
    /* Before anything of the call runs: a call rein has no pid for never started. */
    snprintf(line, sizeof line, "P %lld %d %d", id, (int)getpid(), (int)getpgid(0));
    send_text(line);
    char note[64];
    snprintf(note, sizeof note, "T %d %lld", (int)getpid(), id);
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } handed;
    struct iovec niov = {note, strlen(note)};
    struct msghdr nmsg = {0};
    nmsg.msg_iov = &niov;
    nmsg.msg_iovlen = 1;
    nmsg.msg_control = handed.buf;
    nmsg.msg_controllen = sizeof handed.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&nmsg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fds[2], sizeof(int));
    if (sendmsg(ctl_w, &nmsg, MSG_NOSIGNAL) < 0) {
        /* The server is gone; its reaper's words are lost, nothing else. */
    }
    /* Kept (close-on-exec) for the call's end: see finish(). */
    report_fd = ctl_w;
    for (int target = 0; target < 3; target++)
        dup2(fds[target], target);
    for (int i = 0; i < 3; i++)
        if (fds[i] > 2)
            close(fds[i]);
    return text;
}

/* Plays the cold run's `/bin/sh -c`: leads a session and a group of its own (the group rein
 * kills), forks the call's process into them, tells the server which, and exits. It runs in
 * the server's memory (see fork_leader): it changes nothing there, and never returns but in
 * the waiter, a process of its own. */
static char *leader(void) {
    close(wake_r);
    close(wake_w);
    /* The stderr of calls still running is the server's to keep, not the next call's. */
    for (int i = 0; i < n_calls; i++)
        if (calls[i].stderr_fd >= 0)
            close(calls[i].stderr_fd);
    setsid();
    pid_t pid = fork();
    if (pid == 0)
        return waiter();
    char note[64];
    snprintf(note, sizeof note, "W %d %d", (int)getpid(), (int)pid);
    if (send(ctl_w, note, strlen(note), MSG_NOSIGNAL) < 0) {
        /* The server is gone. */
    }
    _exit(0);
}

static char *fork_leader(void) {
    /* The first call that runs reports what it wrote; a second one if the first did not. */
    learn_wanted = n_learned == 0 && learn_asked < 2;
    if (learn_wanted)
        learn_asked++;
    /* The leader shares the server's memory until it exits (vfork): it only makes a session
     * and forks the waiter, and the one copy of node's address space a call needs is the
     * waiter's. The server waits meanwhile, which is a fork's time. */
    pid_t pid = vfork();
    if (pid == 0)
        return leader();
    if (pid > 0)
        put(coming, &n_coming, pid);
    return NULL;
}

/* The exit code a shell reports for a child's wait status, with its words on the call's
 * stderr when a signal other than SIGINT or SIGPIPE ended it. */
static int signal_words(int status, int stderr_fd) {
    if (!WIFSIGNALED(status))
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    int signum = WTERMSIG(status);
    if (signum != SIGINT && signum != SIGPIPE && stderr_fd >= 0) {
        char text[128];
        const char *name = strsignal(signum);
        snprintf(text, sizeof text, "%s%s\n", name ? name : "Unknown signal",
                 WCOREDUMP(status) ? " (core dumped)" : "");
        if (write(stderr_fd, text, strlen(text)) < 0) {
            /* The call's stderr is closed: nobody reads the words. */
        }
    }
    return 128 + signum;
}

static void read_ctl(void) {
    static char data[16 + MAX_RANGES * sizeof(struct range)];
    for (;;) {
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        struct iovec iov = {data, sizeof data - 1};
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        ssize_t got = recvmsg(ctl_r, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (got >= 8 && memcmp(data, "L pages ", 8) == 0) {
            size_t count = ((size_t)got - 8) / sizeof(struct range);
            if (count > MAX_RANGES)
                count = MAX_RANGES;
            memcpy(learned, data + 8, count * sizeof(struct range));
            n_learned = (int)count;
            continue;
        }
        data[got] = 0;
        int fds[1];
        int nfds = fds_of(&msg, fds, 1);
        int a, b;
        long long id;
        if (sscanf(data, "W %d %d", &a, &b) == 2) {
            take(coming, &n_coming, a);
            put(leaders, &n_leaders, a);
            /* A waiter may take its call before its leader's word comes. */
            if (call_index(b) < 0)
                put(waiters, &n_waiters, b);
        } else if (sscanf(data, "D %d %d", &a, &b) == 2) {
            /* A call's process says how it ends, just before it does: that is its status. */
            int at = call_index(a);
            if (at >= 0) {
                if (calls[at].stderr_fd >= 0)
                    close(calls[at].stderr_fd);
                char line[64];
                snprintf(line, sizeof line, "X %lld %d", calls[at].id, (b & 0xff) << 8);
                calls[at] = calls[--n_calls];
                send_text(line);
                strikes = 0;
            }
        } else if (sscanf(data, "T %d %lld", &a, &id) == 2 && n_calls < MAX_PIDS) {
            take(waiters, &n_waiters, a);
            calls[n_calls].pid = a;
            calls[n_calls].id = id;
            calls[n_calls].stderr_fd = nfds > 0 ? fds[0] : -1;
            n_calls++;
            nfds = 0;
        }
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
    }
}

/* Serves calls until rein is gone; returns (in a call's process only) that call's go. */
static char *serve_calls(void) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
        _exit(0);
    copy_on_fork();
    int wake[2], ctl[2];
    if (pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0)
        _exit(0);
    wake_r = wake[0];
    wake_w = wake[1];
    ctl_r = ctl[0];
    ctl_w = ctl[1];
    struct sigaction sa = {0};
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &old_chld);
    if (write(2, "\0rein-warm-ready\n", 17) != 17)
        _exit(0);
    char *go = fork_leader();
    if (go)
        return go;
    for (;;) {
        struct pollfd fds[2] = {{ctl_r, POLLIN, 0}, {wake_r, POLLIN, 0}};
        poll(fds, 2, -1);
        char drain[64];
        while (read(wake_r, drain, sizeof drain) > 0) {
        }
        read_ctl();
        pid_t reaped[MAX_PIDS];
        int statuses[MAX_PIDS];
        int n = 0;
        for (;;) {
            int status;
            pid_t pid = waitpid(-1, &status, WNOHANG);
            if (pid <= 0)
                break;
            if (n < MAX_PIDS) {
                reaped[n] = pid;
                statuses[n] = status;
                n++;
            }
        }
        /* A waiter says T before its call can end: what it said is read first. */
        if (n)
            read_ctl();
        for (int i = 0; i < n; i++) {
            pid_t pid = reaped[i];
            int status = statuses[i];
            int at = call_index(pid);
            if (at >= 0) {
                int code = signal_words(status, calls[at].stderr_fd);
                if (calls[at].stderr_fd >= 0)
                    close(calls[at].stderr_fd);
                char line[64];
                snprintf(line, sizeof line, "X %lld %d", calls[at].id, code << 8);
                calls[at] = calls[--n_calls];
                send_text(line);
                strikes = 0;
            } else if (take(leaders, &n_leaders, pid)) {
            } else if (take(coming, &n_coming, pid)) {
                strikes++; /* A leader that ended before it made its waiter. */
            } else if (take(waiters, &n_waiters, pid)) {
                if (WIFEXITED(status) && WEXITSTATUS(status) == GONE)
                    _exit(0);
                /* A waiter that ended without a call (killed): another takes its place, up
                 * to three in a row; then the server ends and rein runs the hook cold. */
                strikes++;
            }
            /* Anything else is a process a call left behind, reparented here: reaped. */
        }
        if (strikes >= 3)
            _exit(0);
        if (n_waiters == 0 && n_coming == 0) {
            go = fork_leader();
            if (go)
                return go;
        }
    }
}

static napi_value serve(napi_env env, napi_callback_info info) {
    (void)info;
    isolate_current = (isolate_current_fn)dlsym(RTLD_DEFAULT, "_ZN2v87Isolate10GetCurrentEv");
    isolate_context =
        (isolate_context_fn)dlsym(RTLD_DEFAULT, "_ZN2v87Isolate17GetCurrentContextEv");
    environment_of = (environment_of_fn)dlsym(
        RTLD_DEFAULT, "_ZN4node21GetCurrentEnvironmentEN2v85LocalINS0_7ContextEEE");
    at_exit = (at_exit_fn)dlsym(RTLD_DEFAULT, "_ZN4node6AtExitEPNS_11EnvironmentEPFvPvES2_");
    make_callback = (make_callback_fn)dlsym(
        RTLD_DEFAULT,
        "_ZN4node12MakeCallbackEPN2v87IsolateENS0_5LocalINS0_6ObjectEEEPKciPNS3_INS0_5ValueEEE");
    if (!isolate_current || !isolate_context || !environment_of || !at_exit || !make_callback) {
        napi_throw_error(env, NULL, "this node does not export node::AtExit and node::MakeCallback");
        return NULL;
    }
    char *go = serve_calls();
    napi_value out;
    napi_create_string_utf8(env, go, strlen(go), &out);
    free(go);
    return out;
}

/* ---- The call's end ---- */

/* Ends the call's process with `code`. Its end is said first (the server passes it on as the
 * call's status) and its ends of the pipes closed: taking down a copy of node's address space
 * takes the kernel about a millisecond, and nothing waits for it. */
static void report_written(void);

static void finish(int32_t code) {
    code &= 0xff;
    if (report_fd >= 0) {
        char line[48];
        snprintf(line, sizeof line, "D %d %d", (int)getpid(), (int)code);
        if (send(report_fd, line, strlen(line), MSG_NOSIGNAL) == (ssize_t)strlen(line)) {
            close(0);
            close(1);
            close(2);
        }
        if (learn_wanted)
            report_written();
    }
    _exit(code);
}

/* The pages of its private writable mappings this process has written to since the fork
 * (present and mapped by it alone: /proc/self/pagemap's bits 63 and 56), as ranges, to the
 * server. After the call's end is said: nothing waits for it. */
static void report_written(void) {
    static char message[8 + MAX_RANGES * sizeof(struct range)];
    struct range *out = (struct range *)(message + 8);
    int n = 0;
    memcpy(message, "L pages ", 8);
    FILE *maps = fopen("/proc/self/maps", "re");
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (!maps || pagemap < 0)
        return;
    char line[512];
    uint64_t entries[512];
    while (fgets(line, sizeof line, maps) && n < MAX_RANGES) {
        unsigned long start, end;
        char perms[8] = {0};
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[1] != 'w' ||
            perms[3] != 'p')
            goto skip;
        for (unsigned long page = start; page < end && n < MAX_RANGES;) {
            size_t count = (end - page) / 4096;
            if (count > 512)
                count = 512;
            ssize_t got = pread(pagemap, entries, count * 8, (off_t)(page / 4096 * 8));
            if (got <= 0)
                break;
            for (size_t i = 0; i < (size_t)got / 8 && n < MAX_RANGES; i++, page += 4096) {
                if (!((entries[i] >> 63) & 1) || !((entries[i] >> 56) & 1))
                    continue;
                if (n > 0 && out[n - 1].start + out[n - 1].len == page)
                    out[n - 1].len += 4096;
                else
                    out[n++] = (struct range){page, 4096};
            }
        }
    skip:
        while (!strchr(line, '\n') && fgets(line, sizeof line, maps)) {
        }
    }
    fclose(maps);
    close(pagemap);
    if (send(report_fd, message, 8 + (size_t)n * sizeof(struct range), MSG_NOSIGNAL) < 0) {
        /* The server is gone. */
    }
}

static napi_env armed_env;
static napi_ref process_ref;
static _Alignas(16) unsigned char prepare_handle[512];

/* process.emit(event, code) called as node calls it (node::MakeCallback, no JavaScript frame
 * of rein's): an exception a listener throws is an uncaught one, reported as node reports it
 * and, unhandled, the end of the process through on_node_exit. */
static void emit(napi_value process, const char *event, int32_t code) {
    napi_value args[2];
    napi_create_string_utf8(armed_env, event, strlen(event), &args[0]);
    napi_create_int32(armed_env, code, &args[1]);
    make_callback(isolate_current(), process, "emit", 2, args);
}

static napi_value process_object(void) {
    napi_value process = NULL;
    napi_get_reference_value(armed_env, process_ref, &process);
    return process;
}

/* The code node ends with: process.exitCode (a number or an integer string), else `otherwise`. */
static int32_t exit_code(napi_value process, int32_t otherwise) {
    napi_value value, number;
    napi_valuetype type;
    int32_t code = otherwise;
    if (napi_get_named_property(armed_env, process, "exitCode", &value) != 0 ||
        napi_typeof(armed_env, value, &type) != 0)
        return otherwise;
    if (type == napi_undefined || type == napi_null)
        return otherwise;
    if (napi_coerce_to_number(armed_env, value, &number) != 0 ||
        napi_get_value_int32(armed_env, number, &code) != 0)
        return otherwise;
    return code;
}

static int loop_alive_without_us(void *loop) {
    uv_unref(prepare_handle);
    int alive = uv_loop_alive(loop);
    uv_ref(prepare_handle);
    return alive;
}

/* Runs before each wait of the loop. Node ends when its loop has nothing left: this is that
 * moment, one step before node's own (which would drain the tasks of threads this process
 * does not have). What follows is node's: 'beforeExit' with the code so far, and unless that
 * gave the loop work, process._exiting, 'exit', and the end with process.exitCode or 0. */
static void on_prepare(void *handle) {
    (void)handle;
    void *loop = uv_default_loop();
    if (loop_alive_without_us(loop))
        return;
    napi_handle_scope scope;
    napi_open_handle_scope(armed_env, &scope);
    napi_value process = process_object();
    emit(process, "beforeExit", exit_code(process, 0));
    if (loop_alive_without_us(loop)) {
        napi_close_handle_scope(armed_env, scope);
        return;
    }
    napi_value yes;
    napi_get_boolean(armed_env, 1, &yes);
    napi_set_named_property(armed_env, process, "_exiting", yes);
    emit(process, "exit", exit_code(process, 0));
    finish(exit_code(process, 0));
}

/* After an uncaught exception node sets process._exiting, emits 'exit', prints the error,
 * then runs its AtExit callbacks, then would tear down: the process ends here instead, with
 * the code node would use (process.exitCode, else 1). Node also runs them before it signals
 * itself (process.kill(process.pid)), not exiting then: the signal ends the process as it
 * would a cold one. */
static void on_node_exit(void *arg) {
    (void)arg;
    napi_handle_scope scope;
    if (napi_open_handle_scope(armed_env, &scope) != 0)
        _exit(1);
    napi_value process = process_object(), exiting;
    int yes = 0;
    if (process && napi_get_named_property(armed_env, process, "_exiting", &exiting) == 0)
        napi_get_value_bool(armed_env, exiting, &yes);
    if (yes)
        finish(exit_code(process, 1));
    napi_close_handle_scope(armed_env, scope);
}

static napi_value arm(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value process;
    napi_get_cb_info(env, info, &argc, &process, NULL, NULL);
    if (argc < 1) {
        napi_throw_error(env, NULL, "arm(process)");
        return NULL;
    }
    armed_env = env;
    napi_create_reference(env, process, 1, &process_ref);
    void *loop = uv_default_loop();
    uv_prepare_init(loop, prepare_handle);
    uv_prepare_start(prepare_handle, on_prepare);
    void *isolate = isolate_current();
    void *context = isolate_context(isolate);
    void *node_env = environment_of(context);
    if (node_env)
        at_exit(node_env, on_node_exit, NULL);
    return NULL;
}

static napi_value exit_now(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value arg;
    int32_t code = 0;
    napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
    if (argc >= 1)
        napi_get_value_int32(env, arg, &code);
    finish(code);
    return NULL;
}

/* The call's own pid and parent (node reads them once, when it starts), and a fresh nonzero
 * seed for its Math.random. */
static napi_value ids(napi_env env, napi_callback_info info) {
    (void)info;
    int32_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
        seed = (int32_t)getpid() * 2654435761u;
    char text[64];
    snprintf(text, sizeof text, "%d %d %d", (int)getpid(), (int)getppid(), (int)(seed | 1));
    napi_value out;
    napi_create_string_utf8(env, text, strlen(text), &out);
    return out;
}

static void export_fn(napi_env env, napi_value exports, const char *name, napi_callback cb) {
    napi_value fn;
    napi_create_function(env, name, strlen(name), cb, NULL, &fn);
    napi_set_named_property(env, exports, name, fn);
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
    export_fn(env, exports, "serve", serve);
    export_fn(env, exports, "arm", arm);
    export_fn(env, exports, "exit", exit_now);
    export_fn(env, exports, "ids", ids);
    return exports;
}

int32_t node_api_module_get_api_version_v1(void) { return 8; }
