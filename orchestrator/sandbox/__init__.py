"""The kernel sandbox for shell commands: which paths a command may write, and how it is wrapped.

The engine decides (:func:`plan`), the kernel enforces (:mod:`orchestrator.sandbox.landlock`, Linux Landlock), the
adapter runs the wrapped command (Claude Code and Codex: ``updatedInput``; Gemini CLI: BeforeTool's ``tool_input``;
the reference loop and LangChain run it themselves). On a host that can replace the command, **every** shell command
is wrapped, whatever the analyzer says (issue 21): the analyzer only decides whether a person is asked, never
whether the kernel holds the command. One exemption, in :func:`exempt`: a bare ``cd`` (the host's shell must keep its
cwd). Git runs inside, with the git dir writable and guarded (:mod:`orchestrator.sandbox.gitdir`, scope plan only).

Two kinds of plan (docs/security.md has the full model and its residual gaps):

- **read** (``Plan.scope`` False): no workspace write at all, only the scratch paths (``{tmp}``, ``/tmp``...) and
  devices. For a command the analyzer calls read-only (``ls``, ``grep``, ``git log``: if it hides a write, the kernel
  refuses it), and for any command when no intent is selected (it can still read and run tests). Such a command
  cannot change the workspace, so no change detection runs after it (the cost of a huge scope is not paid).
- **scope**: the selected intent's ``owned_scope`` reduced to literal roots (:func:`orchestrator.core.globs.static_roots`);
  the exact glob is checked after the run by the post-hook. A root that does not exist yet is created empty first
  when it is surely a directory (``build/**``, ``out/``), so the kernel has an inode to attach the rule to; a literal
  root that does not exist (``NOTES.md``: a file or a directory?) grants nothing. Governance paths are never
  granted, even inside a scope root: a root that *contains* one (the workspace root, ``.claude/``, ``.cursor/``) is
  not granted itself; its other children are, one rule each. Plus the policy's ``sandbox.writable``: ``{tmp}`` (a
  private temp dir, exported as ``TMPDIR``), absolute paths (``/tmp``; ignored when the workspace lies beneath one)
  and workspace-relative tool caches (``.pytest_cache``).

In both, a few devices every program writes (``/dev/null``, ``/dev/tty``...) are writable, the secret files of
:func:`secret_paths` are unreadable, and the command inherits only an allow-list of environment variables, none
whose value looks like a credential (:mod:`orchestrator.sandbox.envpolicy`, policy ``sandbox.env_keep`` /
``env_scrub``).

May import: ``core``, ``state``, ``vcs``, ``secrets`` and ``shell``. It takes the pre-hooks' ``Context`` as the
``PlanContext`` protocol and its policy as an object handed in, so it imports neither ``pre`` nor ``config``.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any, Protocol

from orchestrator.sandbox.exempt import (MAX_COMMAND_BYTES, cwd_only, exempt, fetches, opaque, unwrappable,
                                         writes_git, writes_workspace)


class PlanContext(Protocol):
    """What a plan is made from: the parts of the pre-hooks' ``Context`` (``orchestrator.pre.context``) the sandbox
    reads. A protocol, not an import: the pre-hooks import the sandbox, so the sandbox names no pre-hook module."""

    call: Any
    intent: Any
    policy: Any
    root: str
    workspace: Any

    def ignore_rules(self) -> Any: ...  # the compiled .intentignore


#: devices any program may write (terminal output, /dev/null redirections); granted as files
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/random", "/dev/urandom")
#: directories inside which a governance file may be *created* (see orchestrator.core.governance): never granted whole
#: (``.github`` and the two below it that may hold Copilot's settings and setup workflow)
_GOVERNANCE_PARENTS = frozenset({".claude", ".cursor", ".github", ".github/copilot", ".github/workflows"})
#: risk categories the sandbox contains: a command whose risks are only these runs unasked when sandboxed (a
#: ``hijack`` such as ``PYTHONPATH=src python3 -c …`` only changes which code runs: the kernel holds that code too)
CONTAINED = frozenset({"runs-code", "unresolved-target", "hijack"})

_LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")
_abi_cache: int | None = None


def _env_off() -> bool:
    """``ORCH_SANDBOX=off`` in the calling hook's environment (the daemon answers with each call's own ``ORCH_*``
    variables: ``orchestrator.approvals.CALL_ENV``, consulted only where the daemon already imported it)."""
    env: Any = os.environ
    approvals = sys.modules.get("orchestrator.approvals")
    if approvals is not None:
        call_env = approvals.CALL_ENV.get()
        if call_env is not None:
            env = call_env
    return str(env.get("ORCH_SANDBOX", "")).lower() in ("off", "0", "false", "no")


def abi() -> int:
    """The kernel's Landlock ABI (0: none); cached per process. ``ORCH_SANDBOX=off`` forces 0 (tests, debugging)."""
    global _abi_cache
    if _env_off():
        return 0
    if _abi_cache is None:
        from orchestrator.sandbox import landlock

        _abi_cache = landlock.abi()
    return _abi_cache


def unavailable_reason(policy: Any) -> str | None:
    """Why no command can be sandboxed here, or None when the sandbox is available."""
    sb = getattr(policy, "sandbox", None)
    if sb is not None and not sb.enabled:
        return "disabled by policy (sandbox.enabled: false)"
    if _env_off():
        return "disabled by ORCH_SANDBOX=off"
    if not sys.platform.startswith("linux"):
        return f"no Landlock on {sys.platform} (Linux only)"
    if abi() < 1:
        return "this kernel has no Landlock (Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK and lsm=landlock)"
    return None


class Plan:
    """How one shell command runs: sandboxed (``enabled``) with this writable set, or not, and why.

    ``to_dict`` is what verdicts and the ledger show.
    """

    __slots__ = ("enabled", "reason", "abi", "writable", "create", "tmp", "deny_read", "readable", "spec_dir",
                 "scope", "env", "secret_patterns", "network", "net_options", "git", "mounts")

    def __init__(self, enabled: bool, reason: str = "", abi: int = 0, writable: list[str] | None = None,
                 create: list[str] | None = None, tmp: str | None = None, deny_read: list[str] | None = None,
                 readable: list[str] | None = None, spec_dir: str | None = None, *, scope: bool = True,
                 env: list[str] | None = None, secret_patterns: dict[str, str] | None = None) -> None:
        self.enabled = enabled
        self.reason = reason
        self.abi = abi
        self.writable = writable or []
        #: directories to create (empty) before the run so that rules can attach to them
        self.create = create or []
        self.tmp = tmp
        self.deny_read = deny_read or []
        self.readable = readable or []
        #: where the launcher's options are written when they are too many for a readable command line
        self.spec_dir = spec_dir
        #: True: the intent's scope is writable; False: the read plan (no workspace write at all)
        self.scope = scope
        #: the launcher's environment options (only when the policy differs from the built-in lists)
        self.env = env or []
        #: deny_read path -> the secret pattern that matched it (what a refusal names)
        self.secret_patterns = secret_patterns or {}
        #: what the network rule is (network.py; None: unrestricted), for verdicts and the ledger; the launcher's
        #: network options (``--netns``, ``--egress``..., ``--net``/``--net-fallback``); ``--git`` dirs (gitdir.py)
        self.network: dict[str, Any] | None = None
        self.net_options: list[str] = []
        self.git: list[str] = []
        #: the mount namespace's options: run dirs and servers' sockets hidden, protected paths read-only (hidden.py)
        self.mounts: list[str] = []

    def to_dict(self) -> dict[str, Any]:
        if not self.enabled:
            return {"enabled": False, "reason": self.reason}
        out: dict[str, Any] = {"enabled": True, "abi": self.abi, "workspace": "scope" if self.scope else "none",
                               "writable": self.writable}
        if self.deny_read:
            out["deny_read"] = self.deny_read
            out["secret_patterns"] = self.secret_patterns
        if self.network is not None:
            out["network"] = self.network
        if self.git:
            out["git"] = self.git
        return out

    def prepare(self) -> None:
        """Create the missing scope roots (empty directories) the rules attach to. Called once the call is allowed."""
        for path in self.create:
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                pass  # the rule is skipped; writes there fail closed

    def options(self) -> list[str]:
        """The launcher's options for this plan (``-w``/``-r``/``--tmp``)."""
        opts: list[str] = []
        for path in self.writable:
            # a writable directory holding a secret is granted without the read right ("-W"); its other entries
            # come back readable through ``readable`` (new files made directly in it stay unreadable: the price)
            holds = any(d.startswith(path.rstrip("/") + "/") for d in self.deny_read)
            opts += ["-W" if holds else "-w", path]
        for path in self.readable:
            opts += ["-r", path]
        if self.tmp:
            opts += ["--tmp", self.tmp]
        opts += self.net_options
        for path in self.git:
            opts += ["--git", path]
        return opts + self.mounts + self.env

    def wrap(self, command: str) -> str:
        """``command`` as a launcher invocation (a shell command line for the agent's own shell).

        More than :data:`INLINE_OPTIONS` options go to a content-addressed spec file under ``spec_dir``
        (``.orchestration/run/sandbox/``: governance, so no agent can rewrite it), keeping the command the agent and
        its transcript see short. Leading ``cd`` words stay outside, in the host's shell (:mod:`.cwd`)."""
        from orchestrator.sandbox.cwd import split

        prefix, command = split(command)
        opts = self.options()
        if self.spec_dir:
            spec = _write_spec(self.spec_dir, opts)
            stub = _stub(self.spec_dir)
            if stub is not None:
                # the short form: ``/ws/.orchestration/run/sandbox/orch-sandbox 3f2a… -- 'pytest -q'``
                spec_id = os.path.basename(spec)[:-len(".spec")]
                return prefix + " ".join(shlex.quote(a) for a in (stub, spec_id, "--", command))
            if len(opts) > INLINE_OPTIONS:
                opts = ["--spec", spec]
        args = [sys.executable, "-I", "-S", _LAUNCHER, "--orch-sandbox", *opts, "--", command]
        return prefix + " ".join(shlex.quote(a) for a in args)


#: at most this many launcher options are written on the command line itself (else a spec file)
INLINE_OPTIONS = 24


def _write_spec(directory: str, opts: list[str]) -> str:
    from orchestrator.sandbox.compiled import write_spec

    return write_spec(directory, opts)


#: the stub's file name (in the spec dir, ``.orchestration/run/sandbox/``)
STUB = "orch-sandbox"


def _stub(directory: str) -> str | None:
    """The launcher ``directory/orch-sandbox`` (compiled when it can be: :mod:`orchestrator.sandbox.compiled`),
    written when missing or stale, or None if it cannot be written."""
    from orchestrator.sandbox import compiled

    return compiled.install(directory)


def unwrap(command: Any) -> str | None:
    """The original command of a :meth:`Plan.wrap` result, or None if ``command`` is not one of ours.

    Only a command that starts with an interpreter running *this* launcher with its marker counts, so a command
    an agent typed to look like a wrapper is not mistaken for one unless it really is one.
    """
    if not isinstance(command, str):
        return None
    from orchestrator.sandbox.cwd import split

    prefix, line = split(command)
    inner = _unwrap_line(line)
    return None if inner is None else prefix + inner


def _unwrap_line(command: str) -> str | None:
    if "/" + STUB + " " in command:
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if len(words) == 4 and words[2] == "--" and _is_stub(words[0]):
            return words[3]
        return None
    if "--orch-sandbox" not in command or _LAUNCHER not in command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 6 or words[1:5] != ["-I", "-S", _LAUNCHER, "--orch-sandbox"] or words[-2] != "--":
        return None
    return words[-1]


def options_of(command: Any) -> list[str] | None:
    """The launcher options a :meth:`Plan.wrap` result runs with (its spec file read back), or None if ``command`` is
    not one of ours. For ``orch explain``, tests and people reading a transcript."""
    if unwrap(command) is None:
        return None
    from orchestrator.sandbox.cwd import split

    words = shlex.split(split(command)[1])
    if os.path.basename(words[0]) == STUB:
        return _read_spec(os.path.join(os.path.dirname(words[0]), words[1] + ".spec"))
    opts = words[5:-2]
    if opts[:1] == ["--spec"]:
        return _read_spec(opts[1])
    return opts


def _read_spec(path: str) -> list[str] | None:
    try:
        with open(path, "rb") as fh:
            from orchestrator.sandbox.landlock import spec_entries

            return spec_entries(fh.read())
    except OSError:
        return None


def _is_stub(path: str) -> bool:
    """``path`` is a launcher this installation wrote (:func:`orchestrator.sandbox.compiled.is_stub`)."""
    from orchestrator.sandbox import compiled

    return compiled.is_stub(path)


def plan(ctx: PlanContext) -> Plan:
    """The sandbox plan of the call in ``ctx`` (run after the gatekeeper: it needs the selected intent, if any).

    The scope plan when an intent is selected and the command may write the workspace (it is not read-only), else
    the read plan (see the module doc)."""
    sh = ctx.call.shell
    scope = ctx.intent is not None and (sh is None or sh.kind != "read_only")
    return plan_for(ctx.root, ctx.policy, ctx.call.session_id, ctx.workspace.run_dir,
                    ctx.intent.owned_scope if scope and ctx.intent is not None else None, intent=ctx.intent, shell=sh,
                    rules=ctx.ignore_rules() if scope else None)


def plan_for(root: str, policy: Any, session_id: str, run_dir: Any, owned_scope: Any = None, *, intent: Any = None,
             shell: Any = None, rules: Any = None) -> Plan:
    """The plan for a command in workspace ``root``: the scope plan of ``owned_scope``, or the read plan (None).
    ``intent`` (its ``network`` override) and ``shell`` (does it run git: the git-dir mode) refine it; ``rules``
    (the ``.intentignore``) and the governance paths beneath the scope are made read-only (hidden.py)."""
    from orchestrator.sandbox.envpolicy import launcher_options

    reason = unavailable_reason(policy)
    if reason is not None:
        return Plan(False, reason)
    writable: list[str] = []
    create: list[str] = []
    if owned_scope is not None:
        writable, create = scope_grants(root, owned_scope)
    granted = list(writable)
    sb = policy.sandbox
    tmp = None
    for entry in sb.writable:
        if entry == "{tmp}":
            tmp = private_tmp(root, session_id)
            continue
        path = os.path.expanduser(entry)
        if os.path.isabs(path):
            if not os.path.exists(path):
                continue
            real = os.path.realpath(path)
            if _inside(root, real):
                path = os.path.relpath(real, root)  # a path in the workspace: the workspace rules apply
            elif _inside(real, root):
                # the workspace lies beneath it (a checkout in /tmp): granting it would grant the workspace's
                # siblings too (`../x` escapes the workspace) and, minus the workspace, still cost a rule per entry;
                # such an entry is ignored (the private {tmp} remains)
                continue
            else:
                writable.append(real)
                continue
        if owned_scope is None:
            continue  # the read plan: nothing in the workspace, caches included
        grant = _workspace_entry(root, path)
        if grant is not None:
            full, missing = grant
            writable.append(full)
            if missing:
                create.append(full)
    writable.extend(d for d in DEVICES if os.path.exists(d))
    patterns = secret_files(root, policy)
    deny = [p for p in patterns if os.path.exists(p)]
    readable = readable_except(root, deny) if deny else []
    out = Plan(True, abi=abi(), writable=list(dict.fromkeys(writable)), create=create, tmp=tmp,
               deny_read=deny, readable=readable, spec_dir=os.path.join(str(run_dir), "sandbox"),
               scope=owned_scope is not None, env=launcher_options(policy),
               secret_patterns={p: patterns[p] for p in deny})
    _git_and_network(root, policy, intent, shell, out)
    from orchestrator.sandbox.hidden import namespace

    out.mounts = namespace(root, policy, run_dir, granted, rules)
    return out


def _git_and_network(root: str, policy: Any, intent: Any, shell: Any, out: Plan) -> None:
    """The plan's network rule (sandbox.network / the intent's ``network``) and git-dir mode (gitdir.py): a command
    that runs git, or code the analyzer cannot see into (a script, ``make``), gets the repository's git dirs
    writable, guarded and restored by the launcher."""
    from orchestrator.sandbox import network

    out.net_options = network.launcher_options(policy, intent, out.abi, root, os.path.dirname(out.spec_dir or ""))
    out.network = network.summary(out.net_options)
    # the read plan keeps .git read-only (no workspace write at all), except for git's own store of a fetch
    if (out.scope and wants_git(shell)) or (shell is not None and fetches(shell)):
        from orchestrator.sandbox.gitdir import git_dirs

        out.git = git_dirs(root)


def wants_git(sh: Any) -> bool:
    """Whether a command may run git (and so must be able to write the git dir): it names git, or runs code the
    analyzer cannot see into. Other commands keep the git dir read-only and pay nothing for the snapshot."""
    if sh is None:
        return True
    return any(name == "git" for name, _ in sh.programs) or opaque(sh)


def private_tmp(root: str, session_id: str) -> str:
    """A temp dir private to this workspace and session (created by the launcher, mode 0700)."""
    import hashlib

    base = os.environ.get("TMPDIR") or "/tmp"
    tag = hashlib.sha256(f"{root}\0{session_id}".encode()).hexdigest()[:16]
    return os.path.join(base, f"orch-sandbox-{os.getuid() if hasattr(os, 'getuid') else 0}-{tag}")


_OWN: dict[str, tuple[str, ...]] = {}


def _workspace_entry(root: str, rel: str) -> tuple[str, bool] | None:
    """A workspace-relative ``sandbox.writable`` entry: (absolute path, must be created), or None to skip. Never a
    governance path, nor orchestrator's own Python or what holds it (guard.py: a ``.venv`` entry would hand a
    command the hook's own launcher and site-packages)."""
    from orchestrator.core.governance import protected_by
    from orchestrator.sandbox.guard import own_python

    rel = os.path.normpath(rel).replace(os.sep, "/")
    if rel.startswith("..") or rel in (".", "") or protected_by(rel) or rel.split("/")[0].lower() in _GOVERNANCE_PARENTS:
        return None
    own = _OWN.get(root)
    if own is None:
        own = _OWN[root] = own_python(root)  # fixed for this process (its interpreter and package)
    if any(rel == o or o.startswith(rel + "/") or rel.startswith(o + "/") for o in own):
        return None
    full = os.path.join(root, rel)
    real = os.path.realpath(full)
    if not (real == root or real.startswith(root + os.sep)):
        return None  # a link out of the workspace
    if os.path.lexists(full):
        return real, False
    return (full, True) if os.path.isdir(os.path.dirname(full)) else None


def scope_grants(root: str, patterns: Any) -> tuple[list[str], list[str]]:
    """The directories/files Landlock grants for ``owned_scope`` ``patterns``, and the missing roots to create.

    Each glob is reduced to its literal root; governance paths are excluded by granting the children of any
    directory that holds (or may hold) one instead of the directory itself.
    """
    from orchestrator.core.globs import static_root, static_roots
    from orchestrator.sandbox.guard import protected_in

    protected_by = protected_in(root)  # governance paths and core.hooksPath directories (redteam)
    grants: list[str] = []
    create: list[str] = []
    surely_dir = {static_root(p) for p in patterns if _root_is_dir(p)}
    for rel in static_roots(patterns):
        if rel and (protected_by(rel) or protected_by(rel.split("/")[0])):
            continue  # inside a governance path: selfguard refuses it anyway
        full = os.path.join(root, rel) if rel else root
        if not os.path.lexists(full):
            if rel in surely_dir and _inside(root, os.path.dirname(full)):
                create.append(full)
                grants.append(full)
            continue
        real = os.path.realpath(full)
        if not _inside(root, real):
            continue  # a scope root that is a link out of the workspace grants nothing
        rel_real = os.path.relpath(real, root).replace(os.sep, "/") if real != root else ""
        _grant_tree(root, rel_real, grants, protected_by)
    return grants, create


def _root_is_dir(pattern: str) -> bool:
    """True when ``pattern``'s literal root is surely a directory (a glob or a '/' follows it)."""
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    if pat.endswith("/"):
        return True
    return any(ch in pat for ch in "*?[")


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def _grant_tree(root: str, rel: str, out: list[str], protected_by: Any) -> None:
    """Grant ``rel`` whole, or, if it is (or may hold) a governance path, its non-governance children."""
    full = os.path.join(root, rel) if rel else root
    holds = getattr(protected_by, "holds", None)  # a core.hooksPath directory beneath rel (sandbox/guard.py)
    holds_governance = rel == "" or rel.lower() in _GOVERNANCE_PARENTS or bool(holds and holds(rel))
    if not holds_governance:
        out.append(full)
        return
    try:
        names = sorted(os.listdir(full))
    except OSError:
        return
    for name in names:
        child = f"{rel}/{name}" if rel else name
        if protected_by(child):
            continue
        if os.path.islink(os.path.join(root, child)):
            continue  # a link's rule would attach to its target, wherever that is
        _grant_tree(root, child, out, protected_by)


def secret_files(root: str, policy: Any) -> dict[str, str]:
    """The existing secret files whose reads the sandbox denies, real path -> the pattern that matched
    (:func:`orchestrator.secrets.patterns.secret_spec`: the policy's secret patterns, matched against the workspace and the
    home's credential dirs).

    A concrete list, because a Landlock rule needs an inode: a secret created later, or beyond the scan's limit,
    is left to the analyzer and the read hooks.
    """
    try:
        from orchestrator.secrets.patterns import for_policy, secret_spec
    except ImportError:
        return {}
    m = for_policy(policy)
    return {os.path.realpath(p): m.match(p, root) or "?" for p in secret_spec(root, policy)["files"]}


def secret_paths(ctx: PlanContext) -> list[str]:
    """Absolute paths of the existing secret files whose reads the sandbox denies (see :func:`secret_files`)."""
    return list(secret_files(ctx.root, ctx.policy))


def readable_except(root: str, deny: list[str]) -> list[str]:
    """Grants covering the whole file system except the files in ``deny`` (one rule per sibling on each path)."""
    out: list[str] = []
    deny_set = {os.path.realpath(d) for d in deny}
    ancestors: set[str] = set()
    for d in deny_set:
        p = d
        while True:
            parent = os.path.dirname(p)
            if parent == p:
                break
            ancestors.add(parent)
            p = parent

    def walk(directory: str) -> None:
        try:
            names = os.listdir(directory)
        except OSError:
            return
        for name in names:
            child = os.path.join(directory, name)
            if child in deny_set or os.path.islink(child):
                continue  # a link's rule would attach to its target (maybe an ancestor of a secret)
            if child in ancestors:
                walk(child)
            else:
                out.append(child)

    walk("/")
    return out


__all__ = ["Plan", "plan", "plan_for", "abi", "exempt", "writes_git", "cwd_only", "opaque", "unwrappable",
           "writes_workspace", "unavailable_reason", "unwrap", "scope_grants", "CONTAINED", "MAX_COMMAND_BYTES",
           "options_of"]
