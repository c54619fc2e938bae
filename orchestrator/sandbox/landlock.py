"""Linux Landlock through ctypes, and the sandbox launcher that runs ONE shell command under it.

This file is both a module (the engine imports :func:`abi` and :func:`restrict`) and the launcher script::

    python -I -S .../orchestrator/sandbox/landlock.py --orch-sandbox [-w PATH]... [-W PATH]... [-r PATH]... [--tmp DIR] \\
        -- 'the original command'

It restricts itself (``landlock_create_ruleset`` / ``landlock_add_rule`` / ``landlock_restrict_self``), then
``exec``s ``/bin/bash -c 'the original command'``: the command and everything it starts can write only beneath
the ``-w`` paths. The launcher is started once per sandboxed shell command, so it imports nothing but the
standard library's ``os``, ``sys`` and ``ctypes`` (``-I -S``: no site, no ``sys.path`` from the environment;
that also means no import of the ``orchestrator`` package, so this file must stay self-contained).

Fail-closed: if the kernel refuses any step the command is NOT run (exit 126 and a message on stderr). The
engine decides whether a command is sandboxed; a launcher that silently ran it unrestricted would turn a
"no person needed, the kernel holds it" decision into an ungoverned run.

Landlock ABI (detected at run time, ``landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)``):
1 filesystem rights; 2 ``REFER`` (rename/link across directories); 3 ``TRUNCATE``; 4 TCP bind/connect;
5 ``IOCTL_DEV``; 6 signal/abstract-socket scoping; 7 audit flags. We handle the write rights of the running
ABI (and read rights only where a read must be denied); see docs/security.md for what older ABIs leave open.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the launcher's import path
    from collections.abc import Iterable

# syscall numbers are the same on every architecture since the syscall table was unified (5.13)
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_VERSION_3 = 0x20080522

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
# network (ABI 4): struct landlock_net_port_attr rules on TCP ports
RULE_NET_PORT = 2
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
# scoping (ABI 6): a sandboxed process may not connect to an abstract UNIX socket bound, nor signal a process,
# outside its domain
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

#: rights a rule on a regular file (not a directory) may carry
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = READ_FILE | READ_DIR

#: launcher exit code when the sandbox cannot be set up (the command did not run); 126 = "cannot execute"
EXIT_SETUP = 126
MARKER = "--orch-sandbox"


def write_rights(abi_version: int) -> int:
    """Every right that changes the file system, for ``abi_version``."""
    rights = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
              | MAKE_BLOCK | MAKE_SYM)
    if abi_version >= 2:
        rights |= REFER
    if abi_version >= 3:
        rights |= TRUNCATE
    return rights


_libc = None


def _lib():  # -> ctypes.CDLL
    global _libc
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (not Linux, too old, disabled at boot)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        lib = _lib()
        lib.syscall.restype = __import__("ctypes").c_long
        version = lib.syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return version if version > 0 else 0


class LandlockError(OSError):
    """A Landlock step failed; the command must not run."""


def _check(result: int, what: str) -> int:
    if result < 0:
        import ctypes

        err = ctypes.get_errno()
        raise LandlockError(err, f"{what}: {os.strerror(err)}")
    return result


def restrict(writable: Iterable[str], *, deny_read: Iterable[str] = (), readable: Iterable[str] = (),
             write_only: Iterable[str] = (), abi_version: int | None = None, network: str | None = None,
             abstract: bool = False) -> int:
    """Restrict this process (and every child) to writing beneath ``writable``. Returns the ABI used.

    ``writable`` paths that do not exist are skipped (a rule needs an open file). When ``readable`` is given,
    file reads are handled too: only files beneath ``readable`` (and ``writable``) may be read — the engine passes
    the tree minus the secrets (Landlock can only allow, so a denied read is a missing grant). Listing directories
    stays allowed everywhere (``READ_DIR`` on ``/``): tools that walk the tree must not break on a parent of a secret.
    ``write_only`` paths are writable without the read right (they hold a secret; ``readable`` lists their other
    entries).
    ``network`` (ABI >= 4; see :func:`net_rules`): None leaves TCP alone, ``"deny"`` refuses every TCP connect and
    bind, ``"22,443"`` allows TCP connect to those ports only (bind stays free).
    On ABI >= 6 the domain is scoped: no signal to a process outside it and, unless ``abstract`` (policy
    ``sandbox.sockets.allow`` names one), no connection to an abstract UNIX socket bound outside it.
    Raises :class:`LandlockError` (nothing restricted, or the process is left partly restricted: either way the
    caller must not run the command).
    """
    import ctypes

    version = abi() if abi_version is None else abi_version
    if version < 1:
        raise LandlockError(95, "Landlock is not available on this kernel")
    lib = _lib()
    lib.syscall.restype = ctypes.c_long
    wr = write_rights(version)
    readable = list(readable)
    handled = wr | (READ_RIGHTS if readable else 0)
    if readable:
        readable = ["/", *readable]
    net_handled, ports = net_rules(network, version)
    scoped = SCOPE_SIGNAL | (0 if abstract else SCOPE_ABSTRACT_UNIX_SOCKET) if version >= 6 else 0
    ruleset = _ruleset(lib, handled, net_handled, scoped)
    try:
        _add_ports(lib, ruleset, ports)
        # struct landlock_path_beneath_attr {u64 allowed_access; s32 parent_fd;} __attribute__((packed))
        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        grants: dict[str, int] = {}
        for path in readable:
            grants[path] = grants.get(path, 0) | (READ_DIR if path == "/" else READ_FILE)
        for path in writable:
            grants[path] = grants.get(path, 0) | wr | (READ_FILE if readable else 0)
        for path in write_only:
            grants[path] = grants.get(path, 0) | wr
        o_path = getattr(os, "O_PATH", 0o10000000)
        for path, rights in grants.items():
            try:
                # O_NOFOLLOW: a rule on a symlink's *target* would grant whatever it points to (the engine passes
                # real paths; a link swapped in since then grants nothing)
                fd = os.open(path, o_path | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:
                continue  # a path that does not exist (any more) grants nothing
            try:
                st = os.fstat(fd)
                if (st.st_mode & 0o170000) == 0o120000:
                    continue
                if (st.st_mode & 0o170000) != 0o040000:  # not a directory: only file rights may be granted
                    rights &= FILE_RIGHTS
                if not rights:
                    continue
                rule = PathBeneath(rights, fd)
                _check(lib.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                       f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        _check(lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(lib.syscall(SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version


def net_rules(network: str | None, version: int) -> tuple[int, list[int]]:
    """(handled network rights, ports allowed to connect to) for the launcher's ``--net`` value.

    Raises :class:`LandlockError` when a restriction is asked for and the kernel cannot enforce it (ABI < 4): the
    engine passes ``--net`` only where it can, so a launcher that got it anyway must not run the command open.
    """
    if network is None or network == "allow":
        return 0, []
    if version < 4:
        raise LandlockError(95, f"Landlock ABI {version} cannot restrict the network (needs ABI 4)")
    if network == "deny":
        return NET_BIND_TCP | NET_CONNECT_TCP, []
    try:
        ports = sorted({int(p) for p in network.split(",") if p.strip()})
    except ValueError:
        raise LandlockError(22, f"malformed --net value {network!r}") from None
    if any(not 0 <= p <= 65535 for p in ports):
        raise LandlockError(22, f"--net port out of range in {network!r}")
    return NET_CONNECT_TCP, ports


def _ruleset(lib, handled_fs: int, handled_net: int = 0, scoped: int = 0) -> int:  # noqa: ANN001 (ctypes.CDLL)
    """``landlock_create_ruleset`` for these rights. struct landlock_ruleset_attr {u64 handled_access_fs; u64
    handled_access_net; u64 scoped;}: only as many fields as are used are passed (8 bytes: every ABI accepts it)."""
    import ctypes

    fields = [handled_fs]
    if handled_net or scoped:
        fields.append(handled_net)
    if scoped:
        fields.append(scoped)
    attr = (ctypes.c_uint64 * len(fields))(*fields)
    return _check(lib.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8 * len(fields)), 0),
                  "landlock_create_ruleset")


def _add_ports(lib, ruleset: int, ports: list[int]) -> None:  # noqa: ANN001 (ctypes.CDLL)
    """One ``LANDLOCK_RULE_NET_PORT`` rule per port: TCP connect allowed (struct landlock_net_port_attr {u64
    allowed_access; u64 port;})."""
    import ctypes

    for port in ports:
        rule = (ctypes.c_uint64 * 2)(NET_CONNECT_TCP, port)
        _check(lib.syscall(SYS_ADD_RULE, ruleset, RULE_NET_PORT, ctypes.byref(rule), 0),
               f"landlock_add_rule(tcp port {port})")


def scope_signals() -> bool:
    """Put this process in a nested domain that may not signal processes outside it (ABI >= 6), so a command
    cannot kill the launcher that restores the git dir after it. False (nothing done) on older kernels."""
    version = abi()
    if version < 6:
        return False
    lib = _lib()
    import ctypes

    lib.syscall.restype = ctypes.c_long
    ruleset = _ruleset(lib, 0, 0, SCOPE_SIGNAL)
    try:
        _check(lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(lib.syscall(SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return True


def nest() -> None:
    """Put this process in a nested domain that restricts nothing more (``MAKE_CHAR`` handled and granted on ``/``):
    the kernel refuses ptrace-attach from a domain to its parent's, so a command in the PID namespace cannot read
    the memory of PID 1, the launcher that held the environment before the scrub (pidns.py)."""
    import ctypes

    lib = _lib()
    lib.syscall.restype = ctypes.c_long
    ruleset = _ruleset(lib, MAKE_CHAR)
    try:
        class PathBeneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

        fd = os.open("/", getattr(os, "O_PATH", 0o10000000) | os.O_CLOEXEC)
        try:
            _check(lib.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(PathBeneath(MAKE_CHAR, fd)), 0),
                   "landlock_add_rule(/)")
        finally:
            os.close(fd)
        _check(lib.syscall(SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def scope_or_nest() -> None:
    """The git-mode command's domain: signals scoped (ABI >= 6), else at least nested (:func:`nest`)."""
    if not scope_signals():
        nest()


def drop_capabilities() -> None:
    """No capability left in any set, just before the exec of the command (launcher.c ``drop_caps``): Landlock
    restricts paths, not privileges, and a command run as root (no user namespace is made for root) kept every
    capability — ``mknod`` of the disk in its scope, ``umount`` of the hidden run dir, the clock (redteam3). The
    bounding set first (EPERM: no ``CAP_SETPCAP``, so none to lose, and no_new_privs keeps an exec from gaining
    any), then ambient, then effective/permitted/inheritable; ``capget`` checks the result. Raises OSError."""
    import ctypes

    lib = _lib()
    for cap in range(64):
        if lib.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0:
            break  # EINVAL: past the kernel's last capability
        if lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 and ctypes.get_errno() != 1:  # EPERM
            _check(-1, f"prctl(PR_CAPBSET_DROP, {cap})")
    if lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 and ctypes.get_errno() != 22:  # EINVAL: <4.3
        _check(-1, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    head = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(lib.capset(head, data), "capset")
    _check(lib.capget(head, data), "capget")
    if any(data):
        raise LandlockError(1, "capabilities left after capset")


def contain() -> None:
    """The command's last step before its exec in the PID namespace: the nested domain (:func:`nest`), then no
    capability (:func:`drop_capabilities`)."""
    nest()
    drop_capabilities()


def contain_git() -> None:
    """The same for a git-mode command: signals scoped or a nested domain (:func:`scope_or_nest`), no capability."""
    scope_or_nest()
    drop_capabilities()


class Options:
    """The launcher's parsed command line."""

    __slots__ = ("writable", "readable", "write_only", "tmp", "command", "scrub", "keep", "extra")

    def __init__(self) -> None:
        self.writable: list[str] = []
        self.readable: list[str] = []
        self.write_only: list[str] = []
        self.tmp: str | None = None
        self.command = ""
        #: None: the built-in name patterns (envpolicy.SECRET_ENV); else the policy's (``--env-scrub`` repeated;
        #: ``--env-scrub ''``: none)
        self.scrub: list[str] | None = None
        self.keep: list[str] = []
        #: ``--net``, ``--git`` (see main)
        self.extra: dict[str, list[str]] = {}


def spec_entries(data: bytes) -> list[str]:
    """A spec file's entries: NUL-terminated strings (an empty one is a value: ``--env-scrub ''``)."""
    entries = data.split(b"\0")
    if entries[-1] == b"":
        entries.pop()
    return [a.decode("utf-8", "surrogateescape") for a in entries]


_VALUED = {"-w": "writable", "-r": "readable", "-W": "write_only", "--env-keep": "keep"}
#: the mount namespace's lists (mounts.OPTIONS; kept here so that parsing imports nothing)
_MOUNT_OPTIONS = ("--hide", "--cover", "--ro")
#: the network namespace's options (netns.py)
_NET_OPTIONS = ("--netns", "--egress", "--egress-plan", "--egress-env", "--net-fallback")
#: options that take one of a few words
_CHOICES = {"--pidns": ("on", "off"), "--abstract": ("allow", "scope"), "--netns": ("on", "off")}


def _parse(argv: list[str], spec_dir: str | None = None) -> Options:
    writable: list[str] = []
    if spec_dir is not None and len(argv) > 1 and argv[0] != MARKER:
        # the short form the stub runs (``orch-sandbox ID -- COMMAND``): ID names a spec file beside the stub
        if not argv[0] or any(c not in "0123456789abcdef" for c in argv[0]):
            raise ValueError(f"malformed sandbox spec id {argv[0]!r}")
        argv = [MARKER, "--spec", os.path.join(spec_dir, argv[0] + ".spec"), *argv[1:]]
    if not argv or argv[0] != MARKER:
        raise ValueError(f"usage: landlock.py {MARKER} [--spec FILE] [-w PATH]... [-r PATH]... [--tmp DIR] -- COMMAND")
    if len(argv) > 2 and argv[1] == "--spec":
        # the engine's options, NUL-separated in a file under .orchestration/run/ (no agent can write there):
        # keeps the command the agent sees short when the writable/readable sets are long
        try:
            with open(argv[2], "rb") as fh:
                spec = spec_entries(fh.read())
        except OSError as exc:
            raise ValueError(f"cannot read the sandbox spec {argv[2]}: {exc}") from None
        if "--spec" in spec or "--" in spec:
            raise ValueError("malformed sandbox spec")
        argv = [MARKER, *spec, *argv[3:]]
    opts = Options()
    opts.writable = writable
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            if i + 2 != len(argv):
                raise ValueError("expected exactly one command after --")
            opts.command = argv[i + 1]
            return opts
        if i + 1 >= len(argv):
            raise ValueError(f"{a} needs a value")
        value = argv[i + 1]
        if a in _VALUED:
            getattr(opts, _VALUED[a]).append(value)
        elif a == "--tmp":
            opts.tmp = value
        elif a == "--env-scrub":
            if opts.scrub is None:
                opts.scrub = []
            if value:
                opts.scrub.append(value)
        elif a in ("--net", "--git", "--pidns", "--abstract", *_MOUNT_OPTIONS, *_NET_OPTIONS):
            if a in _CHOICES and value not in _CHOICES[a]:
                raise ValueError(f"malformed {a} value {value!r} ({' or '.join(_CHOICES[a])})")
            opts.extra.setdefault(a, []).append(value)
        else:
            raise ValueError(f"unknown option {a!r}")
        i += 2
    raise ValueError("missing -- COMMAND")


def main(argv: list[str] | None = None, spec_dir: str | None = None) -> int:
    """The launcher: restrict, then exec bash with the command. Returns only on failure.

    ``spec_dir``: set by the stub ``.orchestration/run/sandbox/orch-sandbox`` (:func:`stub_text`), which accepts
    the short form ``orch-sandbox ID -- COMMAND`` (the options are in ``spec_dir/ID.spec``)."""
    try:
        opts = _parse(sys.argv[1:] if argv is None else argv, spec_dir)
    except ValueError as exc:
        sys.stderr.write(f"orchestrator sandbox: {exc}\n")
        return EXIT_SETUP
    writable = opts.writable
    if opts.tmp:
        try:
            os.makedirs(opts.tmp, mode=0o700, exist_ok=True)
        except OSError as exc:
            sys.stderr.write(f"orchestrator sandbox: cannot create the private tmp dir {opts.tmp}: {exc}\n")
            return EXIT_SETUP
        writable.append(opts.tmp)
        # No PYTHONPYCACHEPREFIX here: a prefix makes Python ignore every existing __pycache__ (site-packages
        # included), so each session's first Python command recompiled all it imported (`pytest --version`:
        # ~1 s -> 3.5-5.8 s). Without it, existing bytecode is read, bytecode of in-scope sources is written
        # beside them, and a write refused outside the scope is silently skipped by Python's importer.
    env = command_env(opts)
    guard = None
    if "--git" in opts.extra:
        try:
            guard = _git_guard(opts.extra["--git"])
        except OSError as exc:
            sys.stderr.write(f"orchestrator sandbox: cannot snapshot the git dir ({exc}); the command was NOT run\n")
            return EXIT_SETUP
        writable.extend(guard.roots)
    pidns = _sibling("pidns")
    try:
        # before any namespace: the proxy is reached from the host's, before anything is hidden (netns.py)
        bridge = _bridge(opts.extra, opts.extra.get("--pidns", ["on"])[-1] == "on")
    except ValueError as exc:
        sys.stderr.write(f"orchestrator sandbox: {exc}\n")
        return EXIT_SETUP
    try:
        isolated = _namespaces(opts.extra, pidns)
    except OSError as exc:
        sys.stderr.write(f"orchestrator sandbox: {exc.strerror}; the command was NOT run\n")
        return EXIT_SETUP
    netns_up = False
    if isolated:
        code = pidns.split(bridge.outer if bridge is not None else None)
        if code is not None:
            _exit_now(code)  # the launcher outside: PID 1's (the command's) exit status
        # its own network namespace (netns.py); False: the kernel refused, the port rules below hold instead
        netns_up = bridge is not None and bridge.inner()
        if netns_up and bridge is not None:
            bridge.environ(env)
    try:
        net = opts.extra.get("--net") or (None if netns_up else opts.extra.get("--net-fallback"))
        restrict(writable, readable=opts.readable, write_only=opts.write_only, network=net[-1] if net else None,
                 abstract=opts.extra.get("--abstract", ["scope"])[-1] == "allow")
    except OSError as exc:
        sys.stderr.write(f"orchestrator sandbox: cannot restrict the command ({exc}); it was NOT run. "
                         "Set policy sandbox.enabled: false to fall back to approvals.\n")
        return EXIT_SETUP
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    if guard is not None:
        if isolated:
            pidns.unblock()  # guard.run installs its own forwarding (TERM, INT, HUP)
        code = guard.run(shell, opts.command, dict(env), contain_git, bridge.start_forwarder if bridge else None)
        if isolated:
            _exit_now(code)
        return code
    if isolated:
        _exit_now(pidns.run_init(shell, opts.command, env, contain, bridge.forward_on_demand if bridge else None))
    try:
        drop_capabilities()
        os.execve(shell, [shell, "-c", opts.command], env)
    except OSError as exc:
        sys.stderr.write(f"orchestrator sandbox: cannot run {shell}: {exc}\n")
    return EXIT_SETUP


def _namespaces(extra: dict[str, list[str]], pidns) -> bool:  # noqa: ANN001 (the pidns module)
    """The command's own mount namespace, whatever the PID namespace (mounts.py: run dirs and servers' sockets
    hidden, protected paths read-only), then other processes out of sight unless ``--pidns off`` (pidns.py). True:
    the next child is PID 1 of a new PID namespace; False: the kernel refused one of them (the command runs as
    before). Raises OSError when the working directory is hidden in it."""
    mounts = _sibling("mounts")
    if not mounts.enter():
        return False
    mounts.apply(extra)
    # policy sandbox.pid_namespace: false keeps the host's processes (and lets what the command starts outlive it)
    return extra.get("--pidns", ["on"])[-1] == "on" and bool(pidns.enter())


def command_env(opts: Options) -> dict[str, str]:
    """The environment the command gets: what it inherits (envpolicy.py: an allow-list, no credential-shaped value;
    the agent's API keys and tokens stay with the agent), then the launcher's own variables. The egress proxy's
    variables (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY...) are set here too, after the scrub dropped the agent's own.
    launcher.c's ``command_env`` is the same."""
    rule = _sibling("envpolicy").Rule(opts.keep, opts.scrub)
    env = {name: value for name, value in os.environ.items() if rule.reason(name, value) is None}
    if opts.tmp:
        env["TMPDIR"] = opts.tmp
    env["ORCH_SANDBOXED"] = "1"
    return env


def _exit_now(code: int) -> None:
    """Exit without the interpreter's finalization (~3-5 ms per process; the namespace's two Python processes would
    pay it where the plain launcher ``exec``s): nothing is left to clean up but the standard streams."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def stub_text(python: str, launcher_dir: str) -> str:
    """The executable stub the engine writes to ``.orchestration/run/sandbox/orch-sandbox``: a short, recognisable
    name for the launcher on the command line the host shows (``…/orch-sandbox 3f2a… -- 'pytest -q'``). ``-IS`` in
    one word: Linux hands a shebang's arguments over as a single one."""
    return (f"#!{python} -IS\n"
            "# orchestrator's Landlock launcher (generated; orchestrator/sandbox/landlock.py)\n"
            f"import os, sys\nsys.path.insert(0, {launcher_dir!r})\nimport landlock\n"
            "sys.exit(landlock.main(spec_dir=os.path.dirname(os.path.abspath(__file__))))\n")


def _sibling(name: str):  # -> module
    """``gitdir``, ``pidns`` or ``envpolicy`` beside this file: a package import, or a top-level one under the launcher's -I -S."""
    if __package__:  # imported as orchestrator.sandbox.landlock
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the package is not importable under -I -S
    return __import__(name)


def _bridge(extra: dict[str, list[str]], pid_namespace: bool):  # -> netns.Bridge | None
    """``--netns on`` (with ``--egress``: the bridge to the proxy, reached now, before any namespace); None without
    a PID namespace (no init to run the forwarder: the fallback port rules hold). Raises ValueError for a malformed
    option."""
    value = extra.get("--netns", ["off"])[-1]
    if value not in ("on", "off"):
        raise ValueError(f"malformed --netns value {value!r} (on or off)")
    plan = extra.get("--egress-plan", ["/"])[-1]
    if not plan.startswith("/") or "\n" in plan or len(plan) > 4096:
        raise ValueError(f"malformed --egress-plan {plan!r}")
    for item in extra.get("--egress-env", []):
        if "=" not in item or item.startswith("="):
            raise ValueError(f"malformed --egress-env {item!r} (NAME=VALUE)")
    if value == "off" or not pid_namespace:
        return None
    bridge = _sibling("netns").Bridge(extra)
    bridge.prepare()
    return bridge


def _git_guard(roots: list[str]):  # -> gitdir.Guard
    """The git-dir mode (``--git DIR``): snapshot what git runs or trusts, start the guardian (gitdir.py)."""
    return _sibling("gitdir").Guard(roots)


if __name__ == "__main__":
    sys.exit(main())
