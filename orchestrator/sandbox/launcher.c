/* orchestrator's Landlock launcher, compiled: the fast path of orchestrator/sandbox/landlock.py's main().
 *
 *     .orchestration/run/sandbox/orch-sandbox ID -- 'the original command'
 *
 * ID names the NUL-separated spec file ID.spec beside this binary (written by the engine: -w -r -W --tmp
 * --env-scrub --env-keep --net --git). The launcher scrubs the environment, creates the private tmp dir, restricts
 * itself with Landlock and execs /bin/bash (else /bin/sh) -c COMMAND. Same rules, same messages in substance and the
 * same fail-closed exit 126 as the Python launcher (tests/sandbox/test_compiled.py runs both on the same specs).
 * `--git` (the git-dir guardian, gitdir.py) is Python only: this binary execs the Python stub beside it
 * (orch-sandbox-python) with its own arguments, before it has changed anything.
 *
 * Other processes: before Landlock, the launcher moves the command into a new PID namespace with its own /proc
 * (mount namespace; a user namespace too when not root), so /proc/PID/environ of the host's shell and the agent is
 * out of sight. A tiny init (PID 1 there) forwards signals and reaps; what the command leaves running dies with it.
 * If the kernel refuses the namespaces, the command runs as before (no isolation; `orch doctor` reports it). Same
 * design in pidns.py for the Python launcher.
 *
 * The mount namespace is made whatever --pidns says, and before Landlock (which forbids every later mount) it hides
 * what the engine lists (mounts.py): --hide DIR (orchestrator's run directories), --cover SOCKET (servers outside the
 * sandbox), --ro PATH (protected paths beneath a writable root). On Landlock ABI >= 6 the command's domain is scoped:
 * no signal to a process outside it, no abstract UNIX socket bound outside it (--abstract allow opens those).
 *
 * Why C: a Python launcher pays the interpreter's start-up (~7.5 ms here) on every shell command; this costs ~1 ms.
 * The engine compiles it on demand (orchestrator/sandbox/compiled.py: in a private directory under the run dir, from
 * a copy of this file and launcher_env.h, with envpolicy.h generated from envpolicy.py beside them) and falls back
 * to the Python stub when there is no compiler. Keep it dependency-free (libc only).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_SETUP 126
#define SYS_CREATE_RULESET 444
#define SYS_ADD_RULE 445
#define SYS_RESTRICT_SELF 446
#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1
#define RULE_NET_PORT 2

#define EXECUTE (1ULL << 0)
#define WRITE_FILE (1ULL << 1)
#define READ_FILE (1ULL << 2)
#define READ_DIR (1ULL << 3)
#define REMOVE_DIR (1ULL << 4)
#define REMOVE_FILE (1ULL << 5)
#define MAKE_CHAR (1ULL << 6)
#define MAKE_DIR (1ULL << 7)
#define MAKE_REG (1ULL << 8)
#define MAKE_SOCK (1ULL << 9)
#define MAKE_FIFO (1ULL << 10)
#define MAKE_BLOCK (1ULL << 11)
#define MAKE_SYM (1ULL << 12)
#define REFER (1ULL << 13)
#define TRUNCATE (1ULL << 14)
#define IOCTL_DEV (1ULL << 15)
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)
#define FILE_RIGHTS (EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV)


/* the Python stub beside this binary: git mode, and what a failed compile leaves in place */
#define PYTHON_STUB "orch-sandbox-python"

extern char **environ;

static int fail(const char *fmt, ...) {
    va_list ap;
    fputs("orchestrator sandbox: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_SETUP;
}

/* a growable list of strings (the options' values) */
typedef struct {
    char **items;
    size_t n, cap;
} list_t;

static void push(list_t *l, char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->items = realloc(l->items, l->cap * sizeof(char *));
        if (!l->items) {
            fail("out of memory");
            exit(EXIT_SETUP);
        }
    }
    l->items[l->n++] = s;
}

typedef struct {
    list_t writable, readable, write_only, scrub, keep;
    list_t hide, cover, ro; /* the mount namespace's lists (mounts.py) */
    int abstract_open;      /* --abstract allow: abstract UNIX sockets outside stay reachable (policy) */
    int scrub_given; /* --env-scrub seen: the policy's name patterns replace SECRET_ENV ('' entries: none) */
    const char *tmp, *net, *command;
    int git;
    int no_pidns; /* --pidns off: policy sandbox.pid_namespace: false */
    /* the network namespace and the egress bridge (the section "network namespace" below) */
    int netns;                                /* --netns on */
    const char *egress, *egress_plan;         /* --egress DIR (the proxy's sockets), --egress-plan FILE */
    const char *net_fallback;                 /* --net-fallback PORTS: where no namespace could be made */
    list_t egress_env;                        /* --egress-env NAME=VALUE: set when the namespace is up */
} opts_t;

static const char *KNOWN_OPTS = "-w -r -W --env-keep --tmp --env-scrub --net --git --pidns --hide --cover --ro "
                                "--abstract --netns --egress --egress-plan --egress-env --net-fallback";

static int parse_net_option(opts_t *o, const char *a, char *v);

/* Parses the options (the spec's, then the command line's after ID). 0 on success, else a message was printed. */
static int parse(char **args, size_t n, opts_t *o) {
    for (size_t i = 0; i < n; i += 2) {
        const char *a = args[i];
        if (strcmp(a, "--") == 0) {
            if (i + 2 != n)
                return fail("expected exactly one command after --"), -1;
            o->command = args[i + 1];
            return 0;
        }
        if (i + 1 >= n)
            return fail("%s needs a value", a), -1;
        char *v = args[i + 1];
        if (strcmp(a, "-w") == 0)
            push(&o->writable, v);
        else if (strcmp(a, "-r") == 0)
            push(&o->readable, v);
        else if (strcmp(a, "-W") == 0)
            push(&o->write_only, v);
        else if (strcmp(a, "--env-keep") == 0)
            push(&o->keep, v);
        else if (strcmp(a, "--hide") == 0)
            push(&o->hide, v);
        else if (strcmp(a, "--cover") == 0)
            push(&o->cover, v);
        else if (strcmp(a, "--ro") == 0)
            push(&o->ro, v);
        else if (strcmp(a, "--abstract") == 0) {
            if (strcmp(v, "allow") != 0 && strcmp(v, "scope") != 0)
                return fail("malformed --abstract value '%s' (allow or scope)", v), -1;
            o->abstract_open = strcmp(v, "allow") == 0;
        }
        else if (strcmp(a, "--tmp") == 0)
            o->tmp = v;
        else if (strcmp(a, "--env-scrub") == 0) {
            o->scrub_given = 1;
            if (*v)
                push(&o->scrub, v);
        } else if (strcmp(a, "--net") == 0)
            o->net = v;
        else if (strcmp(a, "--git") == 0)
            o->git = 1;
        else if (strcmp(a, "--pidns") == 0) {
            if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
                return fail("malformed --pidns value '%s' (on or off)", v), -1;
            o->no_pidns = strcmp(v, "off") == 0;
        } else if (parse_net_option(o, a, v) < 0)
            return -1;
    }
    return fail("missing -- COMMAND"), -1;
}

/* The spec file's NUL-terminated entries (an empty one is a value: `--env-scrub ''`), as landlock.spec_entries. */
static int read_spec(const char *path, list_t *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail("cannot read the sandbox spec %s: %s", path, strerror(errno)), -1;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            return close(fd), fail("out of memory"), -1;
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            int err = errno;
            close(fd);
            return fail("cannot read the sandbox spec %s: %s", path, strerror(err)), -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    close(fd);
    buf[len] = '\0';
    for (size_t i = 0; i < len;) {
        size_t k = strlen(buf + i);
        if (strcmp(buf + i, "--spec") == 0 || strcmp(buf + i, "--") == 0)
            return fail("malformed sandbox spec"), -1;
        push(out, buf + i);
        i += k + 1;
    }
    return 0;
}

/* landlock.py's _glob_match: `*` only, ASCII case-insensitive */
static int ieq(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (toupper((unsigned char)a[i]) != toupper((unsigned char)b[i]))
            return 0;
    return 1;
}

static const char *ifind(const char *hay, size_t hay_len, const char *needle, size_t nlen) {
    if (nlen > hay_len)
        return NULL;
    for (size_t i = 0; i + nlen <= hay_len; i++)
        if (ieq(hay + i, needle, nlen))
            return hay + i;
    return NULL;
}

static int glob_match(const char *pat, const char *name, size_t nlen) {
    const char *star = strchr(pat, '*');
    if (!star)
        return strlen(pat) == nlen && ieq(pat, name, nlen);
    const char *last = strrchr(pat, '*') + 1;
    size_t first_len = (size_t)(star - pat), last_len = strlen(last);
    if (nlen < first_len + last_len || !ieq(name, pat, first_len) || !ieq(name + nlen - last_len, last, last_len))
        return 0;
    const char *pos = name + first_len, *end = name + nlen - last_len;
    const char *mid = star + 1;
    while (mid < last) { /* the parts between the first and the last `*`, in order */
        const char *next = strchr(mid, '*');
        size_t mlen = (size_t)(next - mid);
        const char *found = ifind(pos, (size_t)(end - pos), mid, mlen);
        if (!found)
            return 0;
        pos = found + mlen;
        mid = next + 1;
    }
    return 1;
}

static int in_names(const char *name, size_t nlen, const char *const *names, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == nlen && ieq(names[i], name, nlen))
            return 1;
    return 0;
}

static size_t count(const char *const *names) {
    size_t n = 0;
    while (names[n])
        n++;
    return n;
}

#include "launcher_env.h" /* the environment: envpolicy.py's rule (scrub_env, env_set) */

/* The environment the command gets: what it inherits (launcher_env.h), then the launcher's own variables. The
 * egress proxy's variables (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY...) are set here too, after the scrub dropped the
 * agent's own. NULL when out of memory. */
static char **command_env(const opts_t *o, const char *tmp) {
    env_t env = {0};
    if (scrub_env(o, &env) < 0 || (tmp && env_set(&env, "TMPDIR", tmp) < 0) ||
        env_set(&env, "ORCH_SANDBOXED", "1") < 0)
        return NULL;
    return env.items;
}

/* os.makedirs(path, mode=0o700, exist_ok=True): parents with 0777 (& umask), the leaf 0700; an existing leaf must
 * be a directory (following links, as os.path.isdir) */
static int makedirs(const char *path) {
    char *p = strdup(path);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) < 0 && errno != EEXIST) {
            int err = errno;
            struct stat st;
            if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(p);
                errno = err;
                return -1;
            }
        }
        *s = '/';
    }
    free(p);
    if (mkdir(path, 0700) == 0)
        return 0;
    int err = errno;
    struct stat st;
    if (err == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    errno = err;
    return -1;
}

static uint64_t write_rights(long abi) {
    uint64_t r = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO |
                 MAKE_BLOCK | MAKE_SYM;
    if (abi >= 2)
        r |= REFER;
    if (abi >= 3)
        r |= TRUNCATE;
    return r;
}

static char errbuf[4200];

static int lfail(int err, const char *fmt, ...) {
    char what[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(errbuf, sizeof errbuf, "[Errno %d] %s", err, what);
    return -1;
}

static int cmp_port(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* landlock.net_rules: the handled network rights and the ports allowed to connect to */
static int net_rules(const char *net, long abi, uint64_t *handled, long **ports, size_t *nports) {
    *handled = 0;
    *nports = 0;
    if (!net || strcmp(net, "allow") == 0)
        return 0;
    if (abi < 4)
        return lfail(95, "Landlock ABI %ld cannot restrict the network (needs ABI 4)", abi);
    if (strcmp(net, "deny") == 0) {
        *handled = NET_BIND_TCP | NET_CONNECT_TCP;
        return 0;
    }
    *ports = calloc(strlen(net) + 1, sizeof(long));
    char *copy = strdup(net);
    if (!*ports || !copy)
        return lfail(12, "out of memory");
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        if (!*tok)
            continue;
        char *end;
        errno = 0;
        long p = strtol(tok, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (end == tok || *end || errno || (!isdigit((unsigned char)*tok) && *tok != '+' && *tok != '-'))
            return lfail(22, "malformed --net value '%s'", net);
        if (p < 0 || p > 65535)
            return lfail(22, "--net port out of range in '%s'", net);
        (*ports)[(*nports)++] = p;
    }
    qsort(*ports, *nports, sizeof(long), cmp_port);
    *handled = NET_CONNECT_TCP;
    return 0;
}

struct path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static int add_path(int ruleset, const char *path, uint64_t rights) {
    /* O_NOFOLLOW: a rule on a symlink's target would grant whatever it points to; a path that does not exist
     * (any more) grants nothing */
    int fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
        if (!S_ISDIR(st.st_mode))
            rights &= FILE_RIGHTS; /* not a directory: only file rights may be granted */
        if (rights) {
            struct path_beneath rule = {rights, fd};
            if (syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, &rule, 0) < 0)
                rc = lfail(errno, "landlock_add_rule(%s): %s", path, strerror(errno));
        }
    }
    close(fd);
    return rc;
}

/* landlock.restrict: write rights beneath -w (and -W, without read), read rights when -r is given */
static int restrict_self(const opts_t *o, const char *tmp) {
    long abi = syscall(SYS_CREATE_RULESET, NULL, 0, CREATE_RULESET_VERSION);
    if (abi < 1)
        return lfail(95, "Landlock is not available on this kernel");
    uint64_t wr = write_rights(abi), handled = wr, net_handled;
    int reads = o->readable.n > 0;
    if (reads)
        handled |= READ_FILE | READ_DIR;
    long *ports = NULL;
    size_t nports;
    if (net_rules(o->net, abi, &net_handled, &ports, &nports) < 0)
        return -1;
    /* ABI >= 6: no signal to a process outside the command's domain, and (unless the policy opens them) no
     * connection to an abstract UNIX socket bound outside it (mounts cannot hide those) */
    uint64_t scoped = abi >= 6 ? SCOPE_SIGNAL | (o->abstract_open ? 0 : SCOPE_ABSTRACT_UNIX_SOCKET) : 0;
    uint64_t attr[3] = {handled, net_handled, scoped};
    int ruleset = (int)syscall(SYS_CREATE_RULESET, attr, scoped ? 24 : net_handled ? 16 : 8, 0);
    if (ruleset < 0)
        return lfail(errno, "landlock_create_ruleset: %s", strerror(errno));
    int rc = 0;
    for (size_t i = 0; i < nports && rc == 0; i++) {
        if (i && ports[i] == ports[i - 1])
            continue;
        uint64_t rule[2] = {NET_CONNECT_TCP, (uint64_t)ports[i]};
        if (syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, rule, 0) < 0)
            rc = lfail(errno, "landlock_add_rule(tcp port %ld): %s", ports[i], strerror(errno));
    }
    if (rc == 0 && reads)
        rc = add_path(ruleset, "/", READ_DIR);
    for (size_t i = 0; i < o->readable.n && rc == 0; i++)
        rc = add_path(ruleset, o->readable.items[i], strcmp(o->readable.items[i], "/") == 0 ? READ_DIR : READ_FILE);
    for (size_t i = 0; i < o->writable.n && rc == 0; i++)
        rc = add_path(ruleset, o->writable.items[i], wr | (reads ? READ_FILE : 0));
    if (rc == 0 && tmp)
        rc = add_path(ruleset, tmp, wr | (reads ? READ_FILE : 0));
    for (size_t i = 0; i < o->write_only.n && rc == 0; i++)
        rc = add_path(ruleset, o->write_only.items[i], wr);
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        rc = lfail(errno, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (rc == 0 && syscall(SYS_RESTRICT_SELF, ruleset, 0) < 0)
        rc = lfail(errno, "landlock_restrict_self: %s", strerror(errno));
    close(ruleset);
    return rc;
}

/* ---- the PID namespace (pidns.py is the Python launcher's copy of this) ---- */
static volatile pid_t forward_to = 0;

static void forward(int sig) {
    if (forward_to > 0)
        kill(forward_to, sig);
}

/* signals a host sends to stop a command: passed on (PID 1 ignores any signal it has no handler for) */
static const int FORWARDED[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0};

static sigset_t unblocked; /* the mask to restore once forward_to is set (block_forwarded) */

/* Blocks the forwarded signals until the child to pass them to exists (a signal arriving between the fork and
 * forward_to = pid stays pending instead of being lost) */
static void block_forwarded(void) {
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; FORWARDED[i]; i++)
        sigaddset(&set, FORWARDED[i]);
    sigprocmask(SIG_BLOCK, &set, &unblocked);
}

static void forward_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; FORWARDED[i]; i++)
        sigaction(FORWARDED[i], &sa, NULL);
}

/* waits for `pid`; its exit code, or 128 + the signal that killed it (what a shell reports) */
static int wait_for(pid_t pid) {
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, 0);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return EXIT_SETUP;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* ---- the mount namespace (mounts.py is the Python launcher's copy of this) ---- */

/* A new mount namespace (+ a user namespace when not root), / made private. 1, or 0 when the kernel refused (nested
 * in another sandbox, user namespaces restricted): the command runs as before. Made whatever --pidns says. */
static int enter_mountns(void) {
#ifdef ORCH_NO_PIDNS /* bench/bench_every_command.py: what the namespaces cost */
    return 0;
#endif
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWNS | (uid ? CLONE_NEWUSER : 0)) < 0)
        return 0;
    if (uid) { /* map ourselves to ourselves: the command keeps its uid, files keep their owners */
        char map[64];
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        if (write_file("/proc/self/uid_map", map) < 0)
            return 0;
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        if (write_file("/proc/self/gid_map", map) < 0)
            return 0;
    }
    /* private first: a mount made on a shared / would propagate to the host's mount namespace */
    return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

/* statvfs f_flag bits -> the mount flags a remount must keep (locked in a user namespace) */
static const unsigned long KEEP_FLAGS[][2] = {{ST_NOSUID, MS_NOSUID},     {ST_NODEV, MS_NODEV},
                                              {ST_NOEXEC, MS_NOEXEC},     {ST_NOATIME, MS_NOATIME},
                                              {ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME}};

static int is_link(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* --hide (an empty read-only tmpfs over a directory), --cover (/dev/null over a socket), --ro (bound over itself,
 * read-only): mounts.apply. A path gone since the engine looked is skipped; a refused mount leaves that path as
 * it was (orch doctor probes what holds). Then the working directory is looked up again through the new mounts:
 * -1 (a message printed) when it is hidden now. */
static int apply_mounts(const opts_t *o) {
    for (size_t i = 0; i < o->hide.n; i++)
        mount("tmpfs", o->hide.items[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=4k,nr_inodes=1,mode=755");
    for (size_t i = 0; i < o->cover.n; i++)
        if (!is_link(o->cover.items[i])) /* a link's target is not what the engine saw */
            mount("/dev/null", o->cover.items[i], NULL, MS_BIND, NULL);
    for (size_t i = 0; i < o->ro.n; i++) {
        const char *p = o->ro.items[i];
        if (is_link(p) || mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0)
            continue;
        struct statvfs sv;
        unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
        if (statvfs(p, &sv) == 0)
            for (size_t k = 0; k < sizeof KEEP_FLAGS / sizeof KEEP_FLAGS[0]; k++)
                if (sv.f_flag & KEEP_FLAGS[k][0])
                    flags |= KEEP_FLAGS[k][1];
        mount(NULL, p, NULL, flags, NULL);
    }
    if (!o->hide.n && !o->cover.n && !o->ro.n)
        return 0;
    /* the old working directory still shows what lies beneath a new mount (a protected directory writable through
     * it, a hidden one readable) */
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return 0; /* deleted: nothing is beneath it */
    if (chdir(cwd) < 0)
        return fail("the working directory %s is hidden in the sandbox: [Errno %d] %s; the command was NOT run", cwd,
                    errno, strerror(errno)), -1;
    return 0;
}

/* A new PID namespace inside the mount namespace. 1: the next child is PID 1 of it; 0: the kernel refused. */
static int enter_pidns(void) {
    return unshare(CLONE_NEWPID) == 0;
}

/* PID 1 of the new namespace: its own /proc, then (after Landlock) the command as its child */
static void mount_proc(void) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the launcher killed: the namespace and the command die with it */
    /* a refused mount leaves the host's /proc in sight: the command still runs, as without the namespace */
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/* The environment block the kernel shows in /proc/PID/environ (the one this process was started with, before the
 * scrub): zeroed, since the init stays visible to the command as PID 1 */
static void wipe_environ_block(void) {
    for (size_t i = 0; environ[i]; i++)
        memset(environ[i], 0, strlen(environ[i]));
}

/* A nested Landlock domain that restricts nothing more (MAKE_CHAR handled and granted on /): the kernel refuses
 * ptrace-attach from a domain to its parent's, so the command cannot read /proc/1/mem of the init, whose memory
 * held the environment before the scrub (landlock.nest is the Python launcher's copy). */
static int nest(void) {
    uint64_t handled = MAKE_CHAR;
    int ruleset = (int)syscall(SYS_CREATE_RULESET, &handled, 8, 0);
    if (ruleset < 0)
        return lfail(errno, "landlock_create_ruleset: %s", strerror(errno));
    int rc = add_path(ruleset, "/", MAKE_CHAR);
    if (rc == 0 && syscall(SYS_RESTRICT_SELF, ruleset, 0) < 0)
        rc = lfail(errno, "landlock_restrict_self: %s", strerror(errno));
    close(ruleset);
    return rc;
}

/* ---- capabilities (landlock.drop_capabilities is the Python launcher's copy) ----
 *
 * Just before the exec of the command: no capability left, in any set. Landlock restricts paths, not privileges: a
 * command run as root (no user namespace is made for root) kept every capability of the init namespace, and could
 * mknod the disk's block device in its scope and read it whole, umount the tmpfs over the run dir, set the clock the
 * freshness rules read (redteam3). The bounding set goes first (dropping it needs CAP_SETPCAP; EPERM means this
 * process has none to lose, and no_new_privs keeps an exec from gaining any: the kernel caps what an exec grants at
 * the old permitted set), then ambient, then effective/permitted/inheritable; capget checks the result. */
#define CAP_VERSION_3 0x20080522
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static int drop_caps(void) {
    for (int cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
            break; /* EINVAL: past the kernel's last capability */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM)
            return lfail(errno, "prctl(PR_CAPBSET_DROP, %d): %s", cap, strerror(errno));
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) /* EINVAL: before 4.3 */
        return lfail(errno, "prctl(PR_CAP_AMBIENT_CLEAR_ALL): %s", strerror(errno));
    struct { uint32_t version; int pid; } head = {CAP_VERSION_3, 0};
    struct { uint32_t effective, permitted, inheritable; } data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &head, data) < 0)
        return lfail(errno, "capset: %s", strerror(errno));
    if (syscall(SYS_capget, &head, data) < 0)
        return lfail(errno, "capget: %s", strerror(errno));
    for (int i = 0; i < 2; i++)
        if (data[i].effective || data[i].permitted || data[i].inheritable)
            return lfail(EPERM, "capabilities left after capset");
    return 0;
}

/* ---- the network namespace and the egress bridge (netns.py is the Python launcher's copy) ----
 *
 * --netns on: the init (PID 1 of the command's namespace) makes a network namespace of its own with only a
 * loopback interface: nothing the command opens reaches another host, a DNS server or a socket of the host's
 * (abstract Unix sockets are per network namespace). Where the kernel refuses it, --net-fallback's TCP port rules
 * apply instead (as before this existed; `orch doctor` says so).
 *
 * --egress DIR --egress-plan FILE: the way out is this user's egress proxy (orchestrator/egress/server.py), whose
 * Unix sockets are DIR/ctl and DIR/proxy; FILE is what the engine allowed this command to reach. Before anything changes, the launcher opens both (O_PATH: they stay
 * reachable through /proc/self/fd/N once the run directory is hidden, and whatever its path length) and connects
 * to ctl from the host's network namespace. The init makes the namespace, brings lo up, listens on
 * 127.0.0.1:EGRESS_PORT and tells the launcher outside, which registers the namespace with the proxy (the plan id
 * and the namespace's descriptor, SCM_RIGHTS) and answers "go" or "no network". Then the init forks the command
 * (PID 2) and the forwarder (PID 3), which relays every connection to 127.0.0.1:EGRESS_PORT to DIR/proxy. The
 * launcher outside keeps the registration open until the command ends and prints the proxy's refusals on stderr.
 * A proxy that is missing, dead or refuses the registration means no network for the command, and a line that
 * says why (fail closed). */
#include <poll.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#define EGRESS_PORT 3128
#define EGRESS_WAIT_MS 3000 /* for a proxy the engine has just started */
#define EGRESS_REPLY_MS 5000
#define RELAY_BUF 65536
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

typedef struct {
    int wanted;          /* --netns on, with the PID namespace (its init runs the forwarder) */
    int bridge;          /* --egress: a proxy to bridge to */
    int ctl, proxy;      /* the registration connection; an O_PATH descriptor of the traffic socket */
    int procfd;          /* the host's /proc (the init mounts its own on /proc, which the launcher then sees too) */
    int ready[2], go[2]; /* init -> launcher: 'Y' namespace up (listening) / 'N' refused; launcher -> init: 'G'/'X' */
    int listener;        /* the init's 127.0.0.1:EGRESS_PORT */
    int up;              /* the init: the namespace is up */
    char why[600];       /* why the command has no network (the launcher prints it) */
} egress_t;

static egress_t EG = {0, 0, -1, -1, -1, {-1, -1}, {-1, -1}, -1, 0, ""};

static int parse_net_option(opts_t *o, const char *a, char *v) {
    if (strcmp(a, "--netns") == 0) {
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            return fail("malformed --netns value '%s' (on or off)", v), -1;
        o->netns = strcmp(v, "on") == 0;
    } else if (strcmp(a, "--egress") == 0)
        o->egress = v;
    else if (strcmp(a, "--egress-plan") == 0) {
        if (v[0] != '/' || strchr(v, '\n') || strlen(v) > 4096)
            return fail("malformed --egress-plan '%s'", v), -1;
        o->egress_plan = v;
    } else if (strcmp(a, "--egress-env") == 0) {
        if (!strchr(v, '=') || v[0] == '=')
            return fail("malformed --egress-env '%s' (NAME=VALUE)", v), -1;
        push(&o->egress_env, v);
    } else if (strcmp(a, "--net-fallback") == 0)
        o->net_fallback = v;
    else
        return fail("unknown option '%s' (known: %s)", a, KNOWN_OPTS), -1;
    return 0;
}

/* a Unix socket reached through the O_PATH descriptor `pathfd` (no path length limit, no path lookup) */
static int connect_fd(int pathfd) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d", pathfd);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int err = errno;
        close(s);
        errno = err;
        return -1;
    }
    return s;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int open_socket_path(const char *dir, const char *name) {
    char path[8400];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
}

/* The process behind the registration socket is a proxy of this user in the launcher's own network namespace (a
 * server some sandboxed command left listening there is in a namespace of its own: its traffic would go nowhere,
 * but it would read other commands' requests). */
static int peer_is_proxy(int s) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    char path[64];
    struct stat peer, self;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid())
        return 0;
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)cred.pid);
    return stat(path, &peer) == 0 && stat("/proc/self/ns/net", &self) == 0 && peer.st_ino == self.st_ino &&
           peer.st_dev == self.st_dev;
}

/* Before the namespaces: reach the proxy (waiting a little for one the engine has just started). */
static void egress_prepare(const opts_t *o) {
    EG.wanted = 1;
    EG.bridge = o->egress != NULL;
    if (pipe2(EG.ready, O_CLOEXEC) < 0 || pipe2(EG.go, O_CLOEXEC) < 0) {
        EG.wanted = 0; /* the fallback port rules apply */
        return;
    }
    if (!EG.bridge)
        return;
    EG.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int err = 0;
    for (long waited = 0;; waited += 10) {
        int ctl_path = open_socket_path(o->egress, "ctl");
        if (ctl_path >= 0) {
            EG.ctl = connect_fd(ctl_path);
            err = errno;
            close(ctl_path);
            if (EG.ctl >= 0)
                break;
        } else
            err = errno;
        if ((err != ENOENT && err != ECONNREFUSED) || waited >= EGRESS_WAIT_MS)
            break;
        sleep_ms(10);
    }
    if (EG.ctl >= 0 && !peer_is_proxy(EG.ctl)) {
        snprintf(EG.why, sizeof EG.why, "no network for this command: the process behind %s/ctl is not this user's "
                 "egress proxy outside the sandbox", o->egress);
        close(EG.ctl);
        EG.ctl = -1;
        return;
    }
    if (EG.ctl >= 0 && (EG.proxy = open_socket_path(o->egress, "proxy")) < 0)
        err = errno;
    if (EG.ctl < 0 || EG.proxy < 0)
        snprintf(EG.why, sizeof EG.why, "no network for this command: cannot reach the egress proxy in %s (%s); "
                 "`orch doctor` checks it, its output is in %s/out", o->egress, strerror(err), o->egress);
}

static int lo_up(void) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct ifreq req;
    memset(&req, 0, sizeof req);
    strcpy(req.ifr_name, "lo");
    int rc = ioctl(s, SIOCGIFFLAGS, &req);
    if (rc == 0) {
        req.ifr_flags |= IFF_UP;
        rc = ioctl(s, SIOCSIFFLAGS, &req);
    }
    close(s);
    return rc;
}

static int listen_local(void) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(EGRESS_PORT)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 4096) < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    return s;
}

/* The init: make the namespace (1: up, 0: refused, the fallback applies). It does not wait for the registration:
 * the forwarder does (connections wait in the listener's backlog meanwhile), so the command starts at once. */
static int egress_inner(void) {
    close(EG.ready[0]);
    close(EG.go[1]);
    if (EG.ctl >= 0)
        close(EG.ctl);
    if (unshare(CLONE_NEWNET) < 0) {
        (void)!write(EG.ready[1], "N", 1);
        close(EG.ready[1]);
        close(EG.go[0]);
        return 0;
    }
    EG.up = 1;
    (void)!write(EG.ready[1], EG.bridge && EG.ctl >= 0 ? "Y" : "U", 1); /* the launcher registers meanwhile */
    close(EG.ready[1]);
    if (lo_up() == 0 && EG.bridge && EG.ctl >= 0)
        EG.listener = listen_local();
    if (EG.listener >= 0)
        fcntl(EG.listener, F_SETFL, O_NONBLOCK); /* the forwarder accepts until EAGAIN */
    else
        close(EG.go[0]);
    return 1;
}

/* The launcher: send the registration of the init's namespace (the answer is read by egress_outer); 0 if it could
 * not be sent (EG.why says why). */
static int egress_register(const opts_t *o, pid_t init) {
    char path[64], msg[4200];
    snprintf(path, sizeof path, "%d/ns/net", (int)init);
    int nsfd = openat(EG.procfd, path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) {
        if (errno != ENOENT) /* ENOENT: the command has already ended, there is nothing to register */
            snprintf(EG.why, sizeof EG.why, "no network for this command: cannot open /proc/%s: %s", path,
                     strerror(errno));
        return 0;
    }
    int len = snprintf(msg, sizeof msg, "ORCHEGRESS1 %s\n", o->egress_plan ? o->egress_plan : "-");
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {msg, (size_t)len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &nsfd, sizeof(int));
    ssize_t sent = sendmsg(EG.ctl, &mh, MSG_NOSIGNAL);
    close(nsfd);
    if (sent != len)
        snprintf(EG.why, sizeof EG.why, "no network for this command: cannot register with the egress proxy: %s",
                 strerror(errno));
    return sent == len;
}

/* The proxy's lines: the registration's answer first ("OK", else "ERR why": the forwarder is told either way),
 * then one "REFUSED <message>" per refusal, shown on the command's stderr. Returns the bytes left over (a line
 * not yet complete); a line over 4 KiB is dropped, not waited for. */
static size_t proxy_lines(char *buf, size_t have, int *answered) {
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
        *nl = '\0';
        if (!*answered) {
            *answered = 1;
            int ok = strcmp(start, "OK") == 0;
            (void)!write(EG.go[1], ok ? "G" : "X", 1);
            if (!ok)
                fprintf(stderr, "orchestrator sandbox: no network for this command: the egress proxy refused its "
                                "registration (%.400s)\n", start);
        } else if (strncmp(start, "REFUSED ", 8) == 0)
            fprintf(stderr, "orchestrator sandbox: network: %s\n", start + 8);
        start = nl + 1;
    }
    size_t rest = have - (size_t)(start - buf);
    memmove(buf, start, rest);
    return rest == 4096 ? 0 : rest;
}

/* The launcher outside: register, then wait for the init while relaying the proxy's answer and refusals. The
 * registration overlaps the command: a command that opens no connection never waits for it. */
static int egress_outer(const opts_t *o, pid_t init) {
    close(EG.ready[1]);
    close(EG.go[0]);
    signal(SIGPIPE, SIG_IGN); /* a forwarder that never started (no listener) must not take the launcher down */
    char state = 'N';
    if (read(EG.ready[0], &state, 1) != 1)
        state = 'N';
    int sent = state == 'Y' && egress_register(o, init);
    int pidfd = sent ? (int)syscall(SYS_pidfd_open, init, 0) : -1;
    if (state != 'N' && EG.why[0])
        fprintf(stderr, "orchestrator sandbox: %s\n", EG.why);
    if (pidfd < 0) { /* nothing to wait for, or a kernel without pidfd_open (< 5.3): the answer, then the init */
        char reply[8] = "";
        struct pollfd p = {EG.ctl, POLLIN, 0};
        ssize_t k = sent && poll(&p, 1, EGRESS_REPLY_MS) > 0 ? read(EG.ctl, reply, sizeof reply - 1) : 0;
        (void)!write(EG.go[1], k >= 3 && strncmp(reply, "OK\n", 3) == 0 ? "G" : "X", 1);
        close(EG.go[1]);
        if (EG.ctl >= 0 && !sent)
            close(EG.ctl);
        return wait_for(init);
    }
    char buf[4097];
    size_t have = 0;
    int answered = 0;
    for (;;) {
        struct pollfd p[2] = {{pidfd, POLLIN, 0}, {EG.ctl, POLLIN, 0}};
        int r = poll(p, EG.ctl >= 0 ? 2 : 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || p[0].revents)
            break;
        if (p[1].revents) {
            ssize_t k = read(EG.ctl, buf + have, 4096 - have);
            if (k <= 0) {
                fprintf(stderr, "orchestrator sandbox: the egress proxy stopped: no network for the rest of this "
                                "command\n");
                if (!answered)
                    (void)!write(EG.go[1], "X", 1);
                answered = 1;
                close(EG.ctl);
                EG.ctl = -1;
                continue;
            }
            have = proxy_lines(buf, have + (size_t)k, &answered);
        }
    }
    close(pidfd);
    close(EG.go[1]);
    return wait_for(init);
}

/* The environment with the --egress-env variables set (replacing any of the same name). */
static char **egress_environ(char **env, const opts_t *o) {
    size_t n = 0;
    while (env[n])
        n++;
    char **out = calloc(n + o->egress_env.n + 1, sizeof(char *));
    if (!out)
        return env;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(env[i], '=');
        size_t nlen = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
        int replaced = 0;
        for (size_t j = 0; j < o->egress_env.n && !replaced; j++)
            replaced = strncmp(o->egress_env.items[j], env[i], nlen) == 0 && o->egress_env.items[j][nlen] == '=';
        if (!replaced)
            out[k++] = env[i];
    }
    for (size_t j = 0; j < o->egress_env.n; j++)
        out[k++] = o->egress_env.items[j];
    out[k] = NULL;
    return out;
}

/* ---- the forwarder: 127.0.0.1:EGRESS_PORT -> the proxy's traffic socket, byte for byte, half-closes passed on */
typedef struct {
    int fd[2];                 /* 0: the client (TCP), 1: the proxy (Unix) */
    char *buf[2];              /* buf[i]: read from fd[i], to be written to fd[1 - i] */
    size_t len[2], off[2];
    int eof[2];                /* fd[i] reached end of stream */
    int shut[2];               /* fd[i]'s write side is shut (the other side's end of stream passed on) */
} relay_t;

static void relay_close(relay_t *r) {
    close(r->fd[0]);
    close(r->fd[1]);
    free(r->buf[0]);
    free(r->buf[1]);
    free(r);
}

/* Moves bytes of direction i (fd[i] -> fd[1-i]) as far as possible without blocking; -1: the relay broke. */
static int relay_step(relay_t *r, int i, int readable) {
    int dst = r->fd[1 - i];
    for (;;) {
        if (r->len[i] > r->off[i]) {
            ssize_t w = send(dst, r->buf[i] + r->off[i], r->len[i] - r->off[i], MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
            r->off[i] += (size_t)w;
            continue;
        }
        r->len[i] = r->off[i] = 0;
        if (r->eof[i]) {
            if (!r->shut[1 - i]) {
                shutdown(dst, SHUT_WR);
                r->shut[1 - i] = 1;
            }
            return 0;
        }
        if (!readable)
            return 0;
        ssize_t k = recv(r->fd[i], r->buf[i], RELAY_BUF, MSG_DONTWAIT);
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        if (k == 0)
            r->eof[i] = 1;
        r->len[i] = (size_t)k;
        readable = 0; /* one read per wakeup: the other connections get their turn */
    }
}

static relay_t *relay_open(int client) {
    int up = connect_fd(EG.proxy);
    if (up < 0) {
        static int told = 0;
        if (!told++)
            fprintf(stderr, "orchestrator sandbox: the egress proxy is unreachable (%s): no network\n",
                    strerror(errno));
        close(client);
        return NULL;
    }
    relay_t *r = calloc(1, sizeof *r);
    if (!r || !(r->buf[0] = malloc(RELAY_BUF)) || !(r->buf[1] = malloc(RELAY_BUF))) {
        close(client);
        close(up);
        if (r) {
            free(r->buf[0]);
            free(r);
        }
        return NULL;
    }
    r->fd[0] = client;
    r->fd[1] = up;
    return r;
}

/* PID 3 of the command's namespace: wait for the registration, then accept and relay until the init exits (the
 * kernel then ends it). Not registered: close the listener, so that every client fails at once. */
static void forwarder(void) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    char c = 'X';
    if (read(EG.go[0], &c, 1) != 1 || c != 'G')
        _exit(0);
    close(EG.go[0]);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        close(null);
    }
    size_t cap = 64, n = 0;
    relay_t **conns = calloc(cap, sizeof *conns);
    struct pollfd *pf = calloc(2 * cap + 1, sizeof *pf);
    for (;;) {
        pf[0] = (struct pollfd){EG.listener, POLLIN, 0};
        for (size_t c = 0; c < n; c++)
            for (int i = 0; i < 2; i++) {
                relay_t *r = conns[c];
                short ev = 0;
                if (r->len[i] <= r->off[i] && !r->eof[i])
                    ev |= POLLIN; /* (a direction with bytes to write waits on its destination instead) */
                if (r->len[1 - i] > r->off[1 - i])
                    ev |= POLLOUT;
                pf[1 + 2 * c + (size_t)i] = (struct pollfd){r->fd[i], ev, 0};
            }
        if (poll(pf, 1 + 2 * n, -1) < 0 && errno != EINTR)
            _exit(EXIT_SETUP);
        for (size_t c = 0; c < n; c++) {
            relay_t *r = conns[c];
            int bad = 0;
            for (int i = 0; i < 2 && !bad; i++) {
                short in = pf[1 + 2 * c + (size_t)i].revents, out = pf[1 + 2 * c + (size_t)(1 - i)].revents;
                bad = relay_step(r, i, (in & (POLLIN | POLLHUP | POLLERR)) != 0 || (out & POLLOUT)) < 0;
            }
            if (bad || (r->eof[0] && r->eof[1] && r->shut[0] && r->shut[1])) {
                relay_close(r);
                conns[c] = NULL;
            }
        }
        size_t kept = 0;
        for (size_t c = 0; c < n; c++)
            if (conns[c])
                conns[kept++] = conns[c];
        n = kept;
        int client;
        while ((pf[0].revents & POLLIN) && (client = accept4(EG.listener, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
            {
                relay_t *r = relay_open(client);
                if (r && n == cap) {
                    relay_t **more = realloc(conns, 2 * cap * sizeof *conns);
                    struct pollfd *morepf = realloc(pf, (4 * cap + 1) * sizeof *pf);
                    if (more)
                        conns = more;
                    if (morepf)
                        pf = morepf;
                    if (more && morepf)
                        cap *= 2;
                }
                if (r && n < cap)
                    conns[n++] = r;
                else if (r)
                    relay_close(r);
            }
        }
    }
}

/* The init, after forking the command: start the forwarder when the bridge is up. */
static void start_forwarder(void) {
    if (EG.listener < 0)
        return;
    pid_t pid = fork();
    if (pid == 0)
        forwarder();
    close(EG.listener);
    close(EG.go[0]);
    EG.listener = -1;
}

/* The init: start the forwarder only once a connection waits on the listener (a fork and its teardown cost ~1 ms
 * per command, and most commands open none), or return when the command has ended. Orphans are reaped meanwhile,
 * all but the command (the caller's wait collects it). */
static void forwarder_on_demand(pid_t command) {
    int pidfd = (int)syscall(SYS_pidfd_open, command, 0);
    if (pidfd < 0) {
        start_forwarder(); /* a kernel without pidfd_open: at once, as before */
        return;
    }
    for (;;) {
        struct pollfd p[2] = {{pidfd, POLLIN, 0}, {EG.listener, POLLIN, 0}};
        int r = poll(p, 2, 1000);
        if (r < 0 && errno != EINTR)
            break;
        siginfo_t info;
        for (;;) {
            memset(&info, 0, sizeof info);
            if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0 || info.si_pid == command)
                break;
            waitpid(info.si_pid, NULL, 0);
        }
        if (r > 0 && p[0].revents)
            break; /* the command ended */
        if (r > 0 && (p[1].revents & POLLIN)) {
            start_forwarder();
            break;
        }
    }
    close(pidfd);
    if (EG.listener >= 0) { /* no connection came: nothing to forward */
        close(EG.listener);
        close(EG.go[0]);
        EG.listener = -1;
    }
}

/* the tiny init: run the command, pass signals on, reap every orphan until the command ends; then exit with its
 * status (every process still in the namespace is killed by the kernel when PID 1 exits) */
static int run_init(const char *shell, char *const sh_argv[], char **env) {
    pid_t pid = fork(); /* the forwarded signals are still blocked (main) */
    if (pid < 0)
        return fail("cannot fork the command: %s", strerror(errno));
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        for (int i = 0; FORWARDED[i]; i++)
            sigaction(FORWARDED[i], &sa, NULL);
        sigprocmask(SIG_SETMASK, &unblocked, NULL);
        if (nest() < 0 || drop_caps() < 0)
            _exit(fail("cannot restrict the command (%s); it was NOT run", errbuf));
        execve(shell, sh_argv, env);
        _exit(fail("cannot run %s: %s", shell, strerror(errno)));
    }
    forward_to = pid;
    sigprocmask(SIG_SETMASK, &unblocked, NULL);
    if (EG.listener >= 0)
        forwarder_on_demand(pid); /* after the command: it stays PID 2 */
    int status;
    for (;;) {
        pid_t r = wait(&status);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return EXIT_SETUP;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int is_hex_id(const char *s) {
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

/* the directory this binary lives in (the spec dir): argv[0] as the shell ran it, like the Python stub's
 * os.path.dirname(os.path.abspath(__file__)) */
static char *self_dir(const char *argv0) {
    char buf[8200];
    if (strchr(argv0, '/')) {
        char cwd[4096];
        if (argv0[0] != '/' && !getcwd(cwd, sizeof cwd))
            return NULL;
        if ((size_t)snprintf(buf, sizeof buf, "%s%s%s", argv0[0] == '/' ? "" : cwd, argv0[0] == '/' ? "" : "/",
                             argv0) >= sizeof buf)
            return NULL; /* a truncated path could name another directory */
    } else {
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n <= 0)
            return NULL;
        buf[n] = '\0';
    }
    char *slash = strrchr(buf, '/');
    *slash = '\0';
    return strdup(buf[0] ? buf : "/");
}

int main(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "--orch-sandbox") == 0)
        return fail("usage: orch-sandbox ID -- COMMAND (ID: the spec file ID.spec beside the launcher)");
    if (!is_hex_id(argv[1]))
        return fail("malformed sandbox spec id '%s'", argv[1]);
    char *dir = self_dir(argv[0]);
    if (!dir)
        return fail("cannot find the launcher's directory");
    char spec[8400], stub[8400];
    if ((size_t)snprintf(spec, sizeof spec, "%s/%s.spec", dir, argv[1]) >= sizeof spec ||
        (size_t)snprintf(stub, sizeof stub, "%s/%s", dir, PYTHON_STUB) >= sizeof stub)
        return fail("the launcher's path is too long");
    list_t args = {0};
    if (read_spec(spec, &args) < 0)
        return EXIT_SETUP;
    for (int i = 2; i < argc; i++)
        push(&args, argv[i]);
    opts_t o = {0};
    if (parse(args.items, args.n, &o) < 0)
        return EXIT_SETUP;
    if (o.git) {
        /* the git-dir guardian is Python (gitdir.py): hand over before anything changed */
        argv[0] = stub;
        execv(stub, argv);
        return fail("cannot run the Python launcher %s for git mode: %s; the command was NOT run", stub,
                    strerror(errno));
    }
    if (o.tmp && makedirs(o.tmp) < 0)
        return fail("cannot create the private tmp dir %s: [Errno %d] %s", o.tmp, errno, strerror(errno));
    char **env = command_env(&o, o.tmp);
    if (!env)
        return fail("out of memory");
    if (o.netns && !o.no_pidns)
        egress_prepare(&o); /* before any namespace: the proxy is reached from the host's, before anything is hidden */
    int pidns = 0;
    if (enter_mountns()) {
        if (apply_mounts(&o) < 0)
            return EXIT_SETUP;
        pidns = !o.no_pidns && enter_pidns();
    }
    if (pidns) {
        forward_signals();
        block_forwarded(); /* until each process knows whom to pass them to (the init: run_init) */
        pid_t init = fork();
        if (init < 0)
            return fail("cannot fork: %s; the command was NOT run", strerror(errno));
        if (init > 0) {
            forward_to = init;
            sigprocmask(SIG_SETMASK, &unblocked, NULL);
            return EG.wanted ? egress_outer(&o, init) : wait_for(init);
        }
        forward_to = 0;
        wipe_environ_block();
        mount_proc();
        if (EG.wanted && egress_inner() && o.egress_env.n)
            env = egress_environ(env, &o);
    }
    if (!EG.up && !o.net)
        o.net = o.net_fallback; /* no network namespace here: the TCP port rules hold instead */
    if (restrict_self(&o, o.tmp) < 0)
        return fail("cannot restrict the command (%s); it was NOT run. Set policy sandbox.enabled: false to fall "
                    "back to approvals.", errbuf);
    struct stat st;
    const char *shell = stat("/bin/bash", &st) == 0 ? "/bin/bash" : "/bin/sh";
    char *const sh_argv[] = {(char *)shell, "-c", (char *)o.command, NULL};
    if (pidns)
        return run_init(shell, sh_argv, env);
    if (drop_caps() < 0)
        return fail("cannot restrict the command (%s); it was NOT run", errbuf);
    execve(shell, sh_argv, env);
    return fail("cannot run %s: %s", shell, strerror(errno));
}
