"""The approval broker: a destructive call waits for a person's decision in ``orch tui`` or the CLI.

Files under the workspace's :attr:`~orchestrator.workspace.Workspace.approvals_dir` — ``<git common
dir>/orchestration/approvals/`` in a git worktree, shared by every worktree of the repository so one
``orch tui`` / ``orch approvals`` serves them all; ``.orchestration/run/approvals/`` otherwise
(runtime state, never committed). Each request names the worktree and branch that asked:

``<id>.request.json``   a pending request, written by the waiting hook process
``<id>.decision.json``  the person's decision (TUI/CLI), written atomically
``resolved/<id>.json``  request + decision + outcome, once the waiting side has picked it up (audit)
``grants.json``         remembered approvals ("for this session", "for this intent"), each expiring
``audit.jsonl``         one line per event (requested, decided, resolved, granted, grant-used)
``.lock``               serialises decide / resolve / grant updates between processes

The waiting side blocks until the decision file appears — a watchdog observer wakes it at once,
with a polling fallback when watchdog is missing or cannot start — or the timeout passes, which
denies (fail-closed). watchdog is imported lazily inside :meth:`Broker.wait`, never on the hot path.

Grants. A remembered grant matches a later call when **all** of these hold: the same scope key
(the same session for a session grant, the same effective intent for an intent grant), the same
risk class, the same *signature* (see :func:`signature`), and it has not expired. Risk classes
listed in policy ``approval.forbid_remember`` are never remembered: :meth:`Broker.decide` refuses
to create such grants and :func:`request_decision` ignores any that exist.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import shlex
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.errors import OrchestratorError
from orchestrator.fsutil import atomic_write, atomic_write_json, locked
from orchestrator.models import Kind, Verdict

if TYPE_CHECKING:
    from orchestrator.models import ToolCall
    from orchestrator.pipeline import Context

NAME = "approval"
SCOPES = ("once", "session", "intent")
DECISIONS = ("approve", "reject")
#: risk classes from most to least severe; a call gets the first one that applies
RISK_CLASSES = (
    "force-push", "history-rewrite", "recursive-delete", "file-delete", "unresolved-target",
    "unknown-tool", "unknown-command", "destructive",
)
#: bounds of a diff preview: a person reads it in a terminal, and the request file stays small
PREVIEW_MAX_LINES = 120
PREVIEW_MAX_CHARS = 12_000
PREVIEW_MAX_FILE = 512 * 1024
#: requests whose waiter vanished are archived as abandoned this long after they expired
SWEEP_GRACE_SECONDS = 5.0

_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# programs that run arbitrary code given as arguments: a grant for "python" would grant anything
# (including writing a decision file), so their grants bind to the exact command
_INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "dash", "fish", "perl", "ruby", "php",
                           "deno", "bun", "npx", "uvx", "pipx", "eval", "exec", "xargs", "ssh", "docker", "kubectl",
                           "osascript", "powershell", "pwsh", "lua", "Rscript", "java", "env"})
_COMPOUND = re.compile(r"[;&|`$<>()\n]")
# programs whose first non-option argument is a subcommand worth keeping in a signature
_MULTI = frozenset({"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv",
                    "poetry", "make", "terraform", "helm", "gh", "bun", "deno", "dotnet", "mvn", "gradle"})


# ====================================================================== errors
class ApprovalError(OrchestratorError):
    """An approval request cannot be decided (unknown id, already decided, corrupt file...)."""

    type = "approval-error"


class GrantRefused(ApprovalError):
    """Policy forbids remembering a grant for this risk class."""

    type = "grant-refused"


class CorruptRequest(ApprovalError):
    """A request file is not a valid request."""

    type = "approval-corrupt"


# ====================================================================== the request
@dataclass
class ApprovalRequest:
    """One pending question for a person. Serialised as ``<id>.request.json``."""

    id: str
    session_id: str
    tool: str
    summary: str
    reasons: list[str]
    risk: str
    created: float
    expires: float
    agent: str = "python"
    agent_id: str | None = None
    intent_id: str | None = None
    kind: str = "unknown"
    command: str | None = None
    diff: str | None = None
    paths: list[str] = field(default_factory=list)
    signature: str = ""
    cwd: str | None = None
    pid: int | None = None
    #: the worktree (workspace root) and branch the call came from: requests of every worktree share one broker
    worktree: str | None = None
    branch: str | None = None
    version: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "request") -> ApprovalRequest:
        """Validate and build; raises :class:`CorruptRequest` naming what is wrong."""
        if not isinstance(data, dict):
            raise CorruptRequest(f"{source}: not a JSON object", file=source)
        need = {"id": str, "session_id": str, "tool": str, "summary": str, "risk": str}
        for key, typ in need.items():
            if not isinstance(data.get(key), typ) or not data.get(key):
                raise CorruptRequest(f"{source}: missing or invalid {key!r}", file=source)
        if not _ID_RE.match(data["id"]):
            raise CorruptRequest(f"{source}: invalid id {data['id']!r}", file=source)
        for key in ("created", "expires"):
            if not isinstance(data.get(key), (int, float)) or isinstance(data.get(key), bool):
                raise CorruptRequest(f"{source}: missing or invalid {key!r}", file=source)
        reasons = data.get("reasons", [])
        if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
            raise CorruptRequest(f"{source}: 'reasons' must be a list of strings", file=source)
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        for key in ("command", "diff", "agent_id", "intent_id", "cwd", "worktree", "branch"):
            if kwargs.get(key) is not None and not isinstance(kwargs[key], str):
                raise CorruptRequest(f"{source}: {key!r} must be a string", file=source)
        paths = kwargs.get("paths", [])
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise CorruptRequest(f"{source}: 'paths' must be a list of strings", file=source)
        return cls(**kwargs)

    def expired(self, now: float) -> bool:
        return now >= self.expires

    def where(self) -> str:
        """``worktree-name (branch)`` of the asking worktree, ``-`` when unknown (a request from before worktrees)."""
        if not self.worktree:
            return "-"
        name = os.path.basename(self.worktree.rstrip("/")) or self.worktree
        return f"{name} ({self.branch})" if self.branch else name


@dataclass(frozen=True)
class BrokenRequest:
    """A request file that could not be read: shown to the person as an error, never decided."""

    id: str
    path: str
    error: str


def new_id(now: float | None = None) -> str:
    """A short, time-sortable, unguessable id: ``<ms since epoch, hex>-<6 hex>``."""
    ms = int((time.time() if now is None else now) * 1000)
    return f"{ms:x}-{os.urandom(3).hex()}"


def valid_id(request_id: str) -> bool:
    """Ids come from the command line: they must never become a path traversal."""
    return bool(_ID_RE.match(request_id))


# ====================================================================== risk and signature
def _argv(command: str) -> list[str] | None:
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    # skip leading VAR=value assignments, and wrappers that do not change what runs
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
        argv = argv[1:]
    while argv and os.path.basename(argv[0]) in ("sudo", "env", "command", "nohup", "time", "nice"):
        argv = argv[1:]
    return argv


def _segments(command: str) -> list[list[str]]:
    """Simple commands of a (possibly compound) command line, split on ; && || | and newlines."""
    out = []
    for part in re.split(r"\|\||&&|[;|\n&]", command):
        argv = _argv(part.strip())
        if argv:
            out.append(argv)
    return out


def _command_risks(command: str) -> set[str]:
    risks: set[str] = set()
    for argv in _segments(command):
        prog = os.path.basename(argv[0])
        args = argv[1:]
        if prog == "git" and args:
            # git -C dir push ...: find the subcommand
            i = 0
            while i < len(args) and args[i].startswith("-"):
                i += 2 if args[i] in ("-C", "-c") else 1
            sub, rest = (args[i], args[i + 1:]) if i < len(args) else ("", [])
            if sub == "push" and (any(a in ("-f", "--force", "--mirror") or a.startswith("--force")
                                      for a in rest) or any(a.startswith("+") for a in rest)):
                risks.add("force-push")
            if sub == "push" and any(a in ("-d", "--delete") or a.startswith(":") for a in rest):
                risks.add("history-rewrite")
            if sub in ("rebase", "filter-branch", "filter-repo", "replace") or \
                    (sub == "reset" and "--hard" in rest) or (sub == "commit" and "--amend" in rest) or \
                    (sub == "branch" and any(a in ("-D", "-f", "--force") for a in rest)) or \
                    (sub in ("clean",) and any("f" in a for a in rest if a.startswith("-"))) or \
                    (sub in ("checkout", "restore") and ("--" in rest or "." in rest or "-f" in rest)):
                risks.add("history-rewrite")
        elif prog in ("rm", "rmdir", "unlink", "shred"):
            if any(a in ("-r", "-R", "--recursive") or (a.startswith("-") and not a.startswith("--")
                                                        and ("r" in a or "R" in a)) for a in args):
                risks.add("recursive-delete")
            else:
                risks.add("file-delete")
        elif prog == "find" and "-delete" in args:
            risks.add("recursive-delete")
    return risks


def risk_class(call: ToolCall, reasons: Iterable[str] = ()) -> str:
    """The single risk class of a call: the most severe that applies (see :data:`RISK_CLASSES`)."""
    found: set[str] = set()
    text = " ".join(reasons).lower()
    if call.command:
        found |= _command_risks(call.command)
    if "recursive delete" in text:
        found.add("recursive-delete")
    if "force" in text and "push" in text:
        found.add("force-push")
    if "history" in text or "rewrite" in text:
        found.add("history-rewrite")
    if call.kind is Kind.DELETE:
        found.add("file-delete")
    if call.kind is Kind.UNKNOWN:
        found.add("unknown-tool")
    sh = call.shell
    if sh is not None:
        if getattr(sh, "unresolved", False):
            found.add("unresolved-target")
        if getattr(sh, "kind", None) == "unknown":
            found.add("unknown-command")
    for cls in RISK_CLASSES:
        if cls in found:
            return cls
    return "destructive"


def signature(call: ToolCall, risk: str) -> str:
    """What a remembered grant is bound to, besides its scope key and risk class.

    - ``unknown-command``: the program and, for multi-command tools (git, npm, cargo...), its
      subcommand — ``exec:pytest``, ``exec:npm run`` — so "approve for session" stops the same
      question about ``pytest tests/a`` and ``pytest tests/b``. A compound command (pipes,
      ``&&``, redirections, substitutions) binds to its exact text: its parts cannot be vouched for;
      so does an interpreter or launcher (python, node, bash -c, docker, ssh...): "python" for the
      session would mean "any code", including code that forges approvals.
    - ``unknown-tool``: the tool name.
    - every other class (deletes, unresolved targets, force-push, history rewrites): the exact
      command (whitespace-normalised) or the tool and its resolved targets — a grant never
      extends a destructive action to other targets.
    """
    if call.command is not None:
        cmd = " ".join(call.command.split())
        if risk == "unknown-command" and not _COMPOUND.search(cmd):
            argv = _argv(cmd) or []
            prog = os.path.basename(argv[0]) if argv else ""
            if argv and not re.match(r"^(python|pypy)[0-9.]*$", prog) and prog not in _INTERPRETERS:
                sub = next((a for a in argv[1:] if not a.startswith("-")), None) if prog in _MULTI else None
                # `uv run X`, `npm exec X`, `go run .`: the launcher runs whatever follows
                if sub not in ("run", "exec", "x", "dlx", "tool", "shell"):
                    return f"exec:{prog}" + (f" {sub}" if sub else "")
        return f"cmd:{cmd}"
    if risk == "unknown-tool":
        return f"tool:{call.tool}"
    return f"tool:{call.tool}:" + ",".join(sorted(call.resolved))


# ====================================================================== previews
def preview(root: str | os.PathLike[str], call: ToolCall) -> str | None:
    """A bounded unified diff of what a Write/Edit/Delete would do, or None if not applicable."""
    inp = call.input or {}
    if not call.resolved:
        return None
    rel = call.resolved[0]
    full = os.path.join(os.fspath(root), rel)
    content = inp.get("content")
    has_edit = isinstance(inp.get("old_string"), str) and isinstance(inp.get("new_string"), str)
    edits = inp.get("edits") if isinstance(inp.get("edits"), list) else None
    if not (isinstance(content, str) or has_edit or edits or call.kind is Kind.DELETE):
        return None
    try:
        size = os.path.getsize(full)
    except OSError:
        size = -1
    if size > PREVIEW_MAX_FILE:
        return f"(no preview: {rel} is {size} bytes)"
    try:
        with open(full, encoding="utf-8", errors="replace") as fh:
            old = fh.read()
    except OSError:
        old = ""
    if isinstance(content, str):
        new = content
    elif call.kind is Kind.DELETE and not (has_edit or edits):
        new = ""
    else:
        new = old
        steps = edits if edits else [inp]
        for step in steps:
            if not isinstance(step, dict):
                continue
            a, b = step.get("old_string"), step.get("new_string")
            if isinstance(a, str) and isinstance(b, str):
                new = new.replace(a, b) if step.get("replace_all") else new.replace(a, b, 1)
    import difflib  # only for previews: keep it off the import of this module

    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{rel}", f"b/{rel}", lineterm=""))
    return bound(lines) if lines else "(no change)"


def bound(lines: list[str]) -> str:
    """Join at most :data:`PREVIEW_MAX_LINES` lines / :data:`PREVIEW_MAX_CHARS` characters."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= PREVIEW_MAX_LINES or size + len(line) > PREVIEW_MAX_CHARS:
            kept.append(f"... ({len(lines) - len(kept)} more lines)")
            break
        kept.append(line[:400])
        size += len(line) + 1
    return "\n".join(kept)


# ====================================================================== the broker
class Broker:
    """The approval files of one workspace's ``run/approvals/`` directory."""

    def __init__(self, run_dir: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
                 grant_ttl: float = 3600.0) -> None:
        self.dir = Path(run_dir) / "approvals"
        self.clock = clock
        #: lifetime of remembered grants (policy ``approval.grant_ttl_seconds``)
        self.grant_ttl = grant_ttl

    # ---------------------------------------------------------------- paths
    def request_path(self, request_id: str) -> Path:
        return self.dir / f"{self._checked(request_id)}.request.json"

    def decision_path(self, request_id: str) -> Path:
        return self.dir / f"{self._checked(request_id)}.decision.json"

    def resolved_path(self, request_id: str) -> Path:
        return self.dir / "resolved" / f"{self._checked(request_id)}.json"

    @property
    def grants_path(self) -> Path:
        return self.dir / "grants.json"

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return locked(self.dir / ".lock")

    @staticmethod
    def _checked(request_id: str) -> str:
        if not valid_id(request_id):
            raise ApprovalError(f"invalid approval id {request_id!r}",
                                hint="ids look like 18c2f3a4b5c-1a2b3c; `orch approvals` lists them")
        return request_id

    def audit(self, event: str, **data: Any) -> None:
        """Append one event line to ``audit.jsonl`` (one ``write`` on an O_APPEND fd: no torn lines)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"at": self.clock(), "event": event, **data}, default=str, sort_keys=True) + "\n"
        fd = os.open(self.dir / "audit.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    # ---------------------------------------------------------------- requests
    def submit(self, request: ApprovalRequest) -> Path:
        """Persist a new request (atomically). The id must be new."""
        path = self.request_path(request.id)
        if path.exists() or self.resolved_path(request.id).exists():
            raise ApprovalError(f"approval id {request.id!r} already used")
        atomic_write_json(path, request.to_dict())
        self.audit("requested", id=request.id, session_id=request.session_id, risk=request.risk,
                   summary=request.summary)
        return path

    def load(self, request_id: str) -> ApprovalRequest:
        """The pending request ``request_id``; raises :class:`ApprovalError` if unknown or corrupt."""
        path = self.request_path(request_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            if self.resolved_path(request_id).exists():
                raise ApprovalError(f"approval {request_id} is already resolved",
                                    hint=f"see {self.resolved_path(request_id)}") from None
            raise ApprovalError(f"no pending approval {request_id!r}",
                                hint="`orch approvals` lists the pending ones") from None
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise CorruptRequest(f"{path.name}: not valid JSON ({exc})", file=str(path)) from None
        req = ApprovalRequest.from_dict(data, source=path.name)
        if req.id != request_id:
            raise CorruptRequest(f"{path.name}: holds id {req.id!r}", file=str(path))
        return req

    def pending(self, *, include_expired: bool = False,
                include_decided: bool = False) -> list[ApprovalRequest | BrokenRequest]:
        """Pending requests, oldest first; corrupt files come back as :class:`BrokenRequest`."""
        if not self.dir.is_dir():
            return []
        now = self.clock()
        out: list[ApprovalRequest | BrokenRequest] = []
        for path in sorted(self.dir.glob("*.request.json")):
            rid = path.name[: -len(".request.json")]
            try:
                req = self.load(rid)
            except ApprovalError as exc:
                # resolved between glob and read: gone, fine; anything else is shown as an error
                if path.exists():
                    out.append(BrokenRequest(rid, str(path), exc.message))
                continue
            if not include_decided and self.decision_path(rid).exists():
                continue
            if not include_expired and req.expired(now):
                continue
            out.append(req)
        out.sort(key=lambda r: (r.created, r.id) if isinstance(r, ApprovalRequest) else (0.0, r.id))
        return out

    # ---------------------------------------------------------------- deciding (TUI / CLI)
    def decide(self, request_id: str, decision: str, *, scope: str = "once", reason: str | None = None,
               by: str = "cli", forbid_remember: Iterable[str] = ()) -> dict[str, Any]:
        """Write the decision for a pending request; for scope session/intent also remember a grant.

        Raises :class:`ApprovalError` for an unknown, corrupt, expired or already decided request and
        :class:`GrantRefused` when policy forbids remembering this risk class.
        """
        if decision not in DECISIONS:
            raise ApprovalError(f"decision must be one of {DECISIONS}, not {decision!r}")
        if scope not in SCOPES:
            raise ApprovalError(f"scope must be one of {SCOPES}, not {scope!r}")
        if decision == "reject":
            scope = "once"
            if not (reason or "").strip():
                raise ApprovalError("a rejection needs a reason", hint="the reason goes back to the agent")
        with self._lock():
            req = self.load(request_id)
            now = self.clock()
            if self.decision_path(request_id).exists():
                raise ApprovalError(f"approval {request_id} is already decided")
            if req.expired(now):
                raise ApprovalError(f"approval {request_id} expired; the call was denied",
                                    hint="the agent may retry the call to ask again")
            forbidden = set(forbid_remember)
            if scope != "once":
                if req.risk in forbidden:
                    raise GrantRefused(
                        f"{req.risk} is never remembered (policy approval.forbid_remember); approve once instead",
                        hint="press a / use `orch approve ID` without --session/--intent")
                if scope == "intent" and not req.intent_id:
                    raise ApprovalError("the request has no intent to remember the grant for",
                                        hint="approve once or for this session")
            data = {"id": req.id, "session_id": req.session_id, "decision": decision, "scope": scope,
                    "reason": (reason or "").strip() or None, "by": by, "decided_at": now}
            atomic_write(self.decision_path(request_id), json.dumps(data, indent=1).encode())
            grant = None
            if decision == "approve" and scope != "once":
                grant = self._add_grant_locked(req, scope, by=by)
                data["grant"] = grant["id"]
        self.audit("decided", **{k: v for k, v in data.items() if k != "decided_at"})
        if grant:
            self.audit("granted", **grant)
        return data

    # ---------------------------------------------------------------- waiting (hook side)
    def wait(self, request_id: str, timeout: float, *, mode: str = "auto",
             poll_interval: float = 0.02) -> dict[str, Any] | None:
        """Block until the decision file exists (return it) or ``timeout`` seconds pass (None).

        ``mode``: ``auto`` (watchdog if it starts, else polling), ``watchdog`` (same; the fallback is
        kept so a broken inotify never means waiting forever) or ``poll``. A decision that cannot
        be parsed comes back as ``{"decision": "invalid", ...}`` — the caller denies.
        """
        path = self.decision_path(request_id)
        deadline = time.monotonic() + max(0.0, timeout)
        wake = threading.Event()
        observer = None
        if mode != "poll":
            observer = _start_observer(self.dir, path.name, wake)
        # with an observer the periodic re-check only guards against a lost event
        interval = 0.25 if observer is not None else poll_interval
        try:
            while True:
                if path.exists():
                    return self._read_decision(path, request_id)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                wake.wait(min(interval, remaining))
                wake.clear()
        finally:
            if observer is not None:
                with contextlib.suppress(Exception):
                    observer.stop()
                    observer.join(timeout=0.5)

    def _read_decision(self, path: Path, request_id: str) -> dict[str, Any]:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            return {"id": request_id, "decision": "invalid", "error": f"unreadable decision: {exc}"}
        if not isinstance(data, dict) or data.get("id") != request_id or data.get("decision") not in DECISIONS:
            return {"id": request_id, "decision": "invalid", "error": "decision file does not match the request"}
        return data

    def resolve(self, request: ApprovalRequest, *, timed_out: bool) -> dict[str, Any]:
        """Close a request (under the lock): the final decision, archived to ``resolved/<id>.json``.

        A decision that landed in the same instant as the timeout still wins. Without one, a
        ``timeout`` decision is recorded. The request and decision files are then removed; the
        archive keeps both.
        """
        with self._lock():
            dpath = self.decision_path(request.id)
            decision: dict[str, Any]
            if dpath.exists():
                decision = self._read_decision(dpath, request.id)
                if decision.get("session_id") not in (None, request.session_id):
                    decision = {"id": request.id, "decision": "invalid",
                                "error": "decision names another session"}
            else:
                decision = {"id": request.id, "decision": "timeout" if timed_out else "invalid",
                            "decided_at": self.clock(), "by": "broker"}
            record = {"request": request.to_dict(), "decision": decision, "resolved_at": self.clock()}
            atomic_write_json(self.resolved_path(request.id), record)
            for p in (dpath, self.request_path(request.id)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        self.audit("resolved", id=request.id, session_id=request.session_id, outcome=decision.get("decision"))
        return decision

    def sweep(self) -> list[str]:
        """Archive requests whose waiter is gone (expired beyond a grace period). Returns their ids."""
        now = self.clock()
        gone = []
        for item in self.pending(include_expired=True, include_decided=True):
            if isinstance(item, ApprovalRequest) and now > item.expires + SWEEP_GRACE_SECONDS:
                with self._lock():
                    if not self.request_path(item.id).exists():
                        continue
                    record = {"request": item.to_dict(), "resolved_at": now,
                              "decision": {"id": item.id, "decision": "abandoned", "by": "sweep"}}
                    dpath = self.decision_path(item.id)
                    if dpath.exists():
                        record["late_decision"] = self._read_decision(dpath, item.id)
                    atomic_write_json(self.resolved_path(item.id), record)
                    for p in (dpath, self.request_path(item.id)):
                        with contextlib.suppress(FileNotFoundError):
                            p.unlink()
                gone.append(item.id)
                self.audit("resolved", id=item.id, session_id=item.session_id, outcome="abandoned")
        return gone

    # ---------------------------------------------------------------- grants
    def _read_grants(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.grants_path.read_bytes())
        except (OSError, ValueError):
            return []  # a corrupt grants file grants nothing
        grants = data.get("grants") if isinstance(data, dict) else None
        return [g for g in grants if isinstance(g, dict)] if isinstance(grants, list) else []

    def _add_grant_locked(self, req: ApprovalRequest, scope: str, *, by: str) -> dict[str, Any]:
        now = self.clock()
        ttl = self.grant_ttl
        grant = {"id": "g-" + os.urandom(4).hex(), "scope": scope, "worktree": req.worktree,
                 "session_id": req.session_id if scope == "session" else None,
                 "intent_id": req.intent_id if scope == "intent" else None,
                 "risk": req.risk, "signature": req.signature, "created": now, "expires": now + ttl,
                 "request_id": req.id, "by": by}
        live = [g for g in self._read_grants() if _num(g.get("expires")) > now]
        live.append(grant)
        atomic_write_json(self.grants_path, {"version": 1, "grants": live})
        return grant

    def grants(self, *, include_expired: bool = False) -> list[dict[str, Any]]:
        """The remembered grants (live ones unless ``include_expired``)."""
        now = self.clock()
        return [g for g in self._read_grants() if include_expired or _num(g.get("expires")) > now]

    def find_grant(self, *, session_id: str, intent_id: str | None, risk: str, signature: str,
                   forbid_remember: Iterable[str] = (), worktree: str | None = None) -> dict[str, Any] | None:
        """A live grant covering this call, or None. Forbidden risk classes never match.

        A grant binds to the worktree it was given in (the broker is shared by all worktrees of a repository: a
        "for this intent" approval in one checkout must not extend to another checkout's files, nor a session
        grant to a same-named session elsewhere)."""
        if risk in set(forbid_remember):
            return None
        now = self.clock()
        for g in self._read_grants():
            if _num(g.get("expires")) <= now or g.get("risk") != risk or g.get("signature") != signature:
                continue
            if g.get("worktree") not in (None, worktree):
                continue  # (a grant naming no worktree predates them: its broker served one workspace only)
            if g.get("scope") == "session" and g.get("session_id") == session_id:
                return g
            if g.get("scope") == "intent" and intent_id and g.get("intent_id") == intent_id:
                return g
        return None

    def revoke(self, grant_id: str) -> bool:
        """Forget a grant. True if it existed."""
        with self._lock():
            grants = self._read_grants()
            kept = [g for g in grants if g.get("id") != grant_id]
            if len(kept) == len(grants):
                return False
            atomic_write_json(self.grants_path, {"version": 1, "grants": kept})
        self.audit("revoked", grant=grant_id)
        return True


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _start_observer(directory: Path, filename: str, wake: threading.Event) -> Any:
    """A started watchdog observer that sets ``wake`` on any event naming ``filename``; None on failure."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except Exception:  # noqa: BLE001 — watchdog missing or broken: poll instead
        return None

    class _Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            for p in (getattr(event, "src_path", ""), getattr(event, "dest_path", "")):
                if p and os.fsdecode(p).endswith(filename):
                    wake.set()

    _quiet_watchdog()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.daemon = True
        observer.schedule(_Handler(), str(directory), recursive=False)
        observer.start()
        return observer
    except Exception:  # noqa: BLE001 — inotify limits, permissions...: poll instead
        return None


class _DropStopNoise:
    """watchdog 7 logs an *error* when an observer is stopped while its emitter is reading; harmless
    here (we stop it on purpose), and it would land on the stderr of every hook process."""

    def filter(self, record: Any) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


def _quiet_watchdog() -> None:
    import logging

    log = logging.getLogger("watchdog.observers.inotify")
    if not any(isinstance(f, _DropStopNoise) for f in log.filters):
        log.addFilter(_DropStopNoise())


def broker_for(ctx_or_run_dir: Any, *, clock: Callable[[], float] = time.time) -> Broker:
    """A broker configured from a pipeline context (grant TTL from policy) or a run dir."""
    if isinstance(ctx_or_run_dir, (str, os.PathLike)):
        return Broker(ctx_or_run_dir, clock=clock)
    ctx = ctx_or_run_dir
    return Broker(ctx.gov.workspace.shared_run_dir, clock=clock,
                  grant_ttl=float(ctx.policy.approval.grant_ttl_seconds))


def _branch(root: str) -> str | None:
    """The branch checked out in worktree ``root`` (shown to the reviewer), read from ``.git`` with the stdlib."""
    from orchestrator.worktrees import worktree_of

    wt = worktree_of(root)
    if wt is None:
        return None
    return wt.branch or (f"detached {wt.head[:8]}" if wt.head else None)


#: the ``ORCH_*`` environment of the hook process a call came from, when that is not this process's own: the daemon
#: sets it per call (each connection is its own thread, so its own context); None means ``os.environ``
CALL_ENV: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("orch_call_env", default=None)


def timeout_of(policy_seconds: float) -> float:
    """``ORCH_APPROVAL_TIMEOUT`` (seconds, for tests and scripts) overrides the policy value; read from the calling
    hook's environment (:data:`CALL_ENV`), so the daemon and the in-process path answer alike."""
    call_env = CALL_ENV.get()
    env = (os.environ if call_env is None else call_env).get("ORCH_APPROVAL_TIMEOUT")
    if env:
        try:
            value = float(env)
            if value >= 0:
                return value
        except ValueError:
            pass
    return float(policy_seconds)


# ====================================================================== the pre-hook's entry point
def request_decision(ctx: Context, reasons: list[str], summary: str) -> Verdict:
    """Ask a person (``orch tui`` / ``orch approve``) about the call in ``ctx``; block until decided.

    A live matching grant allows at once. Otherwise a request is written and this waits; a
    rejection comes back as ``approval-rejected`` carrying the person's reason, silence as
    ``approval-timeout``. Anything unexpected denies.
    """
    call = ctx.call
    pol = ctx.policy.approval
    broker = broker_for(ctx)
    risk = risk_class(call, reasons)
    sig = signature(call, risk)
    intent_id = ctx.intent.id if ctx.intent is not None else (call.intent_id or ctx.session.get("intent_id"))
    forbidden = list(pol.forbid_remember)
    worktree = ctx.gov.root
    grant = broker.find_grant(session_id=call.session_id, intent_id=intent_id, risk=risk, signature=sig,
                              forbid_remember=forbidden, worktree=worktree)
    if grant is not None:
        broker.audit("grant-used", grant=grant.get("id"), session_id=call.session_id, intent_id=intent_id,
                     risk=risk, summary=summary)
        return Verdict.allow()
    timeout = timeout_of(pol.timeout_seconds)
    now = broker.clock()
    req = ApprovalRequest(
        id=new_id(now), session_id=call.session_id, tool=call.tool, summary=summary, reasons=list(reasons),
        risk=risk, created=now, expires=now + timeout, agent=call.agent, agent_id=call.agent_id,
        intent_id=intent_id, kind=call.kind.value, command=call.command,
        diff=None if call.command else preview(ctx.gov.root, call), paths=list(call.resolved),
        signature=sig, cwd=call.cwd, pid=os.getpid(), worktree=worktree, branch=_branch(ctx.gov.root),
    )
    broker.submit(req)
    got = broker.wait(req.id, timeout)
    decision = broker.resolve(req, timed_out=got is None)
    verdict = decision.get("decision")
    common = {"request": req.id, "risk": risk, "reasons": list(reasons)}
    if verdict == "approve":
        return Verdict.allow()
    if verdict == "reject":
        why = decision.get("reason") or "no reason given"
        return Verdict.deny(
            "approval-rejected", NAME, f"a person rejected this call: {summary}", reason=why, **common,
            hint=f"the reviewer said: {why!r}. Do not retry the same call; change your approach accordingly "
                 "or ask the person",
        )
    if verdict == "timeout":
        return Verdict.deny(
            "approval-timeout", NAME, f"no decision within {timeout:g} s: {summary}", timeout=timeout, **common,
            hint="nobody approved this in time (is `orch tui` running?); the call was refused. Retry later "
                 "or find a non-destructive way",
        )
    return Verdict.deny(
        "approval-invalid", NAME, f"the approval decision could not be used: {decision.get('error')}",
        **common, hint="a person must decide again; retry the call to ask again",
    )


__all__ = [
    "ApprovalError", "ApprovalRequest", "BrokenRequest", "Broker", "CorruptRequest", "GrantRefused",
    "RISK_CLASSES", "SCOPES", "broker_for", "new_id", "preview", "request_decision", "risk_class",
    "signature", "timeout_of",
]
