"""The broker: request files, waiting for a decision, deciding, resolving, and remembered grants.

See :mod:`orchestrator.approvals` for the file layout and the grant rules.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from orchestrator.approvals.request import (
    ApprovalError,
    ApprovalRequest,
    BrokenRequest,
    CorruptRequest,
    GrantRefused,
    valid_id,
)
from orchestrator.core.fsutil import atomic_write, atomic_write_json, locked

SCOPES = ("once", "session", "intent")
DECISIONS = ("approve", "reject")
#: a decision file beyond this size is not read (it is refused as oversized)
MAX_DECISION_BYTES = 32 * 1024
#: requests whose waiter vanished are archived as abandoned this long after they expired
SWEEP_GRACE_SECONDS = 5.0


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
               by: str = "cli", forbid_remember: Iterable[str] = (),
               intent: dict[str, Any] | None = None, assertion: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the decision for a pending request; for scope session/intent also remember a grant.

        ``intent``: for an intent proposal, the fields the person changed before accepting (the waiting side
        validates and writes the intent, :mod:`orchestrator.approvals.proposal`). A request of the ``passkey``
        channel takes only a decision carrying the approver's ``assertion`` (the console's); its grant is
        remembered by the waiting hook once it verified the signature, never here. Raises :class:`ApprovalError`
        for an unknown, corrupt, expired or already decided request (or an unsigned decision on a passkey request)
        and :class:`GrantRefused` when policy forbids remembering this risk class.
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
            signed = req.channel == "passkey"
            if signed and not isinstance(assertion, dict):
                raise ApprovalError(f"approval {request_id} needs a decision signed with an approver's passkey",
                                    hint="decide it in the console (`orch console`); the waiting hook verifies "
                                         "the signature itself")
            if req.expired(now):
                raise ApprovalError(f"approval {request_id} expired; the call was denied",
                                    hint="the agent may retry the call to ask again")
            if req.proposal is not None and scope != "once":
                raise ApprovalError("a proposed intent is accepted once, never remembered",
                                    hint="approve it without --session/--intent")
            if intent is not None and (req.proposal is None or decision != "approve"):
                raise ApprovalError("only an accepted intent proposal carries intent fields")
            forbidden = set(forbid_remember)
            if scope != "once":
                if req.risk in forbidden:
                    raise GrantRefused(
                        f"{req.risk} is never remembered (policy approval.forbid_remember); approve once instead",
                        hint="press a / use `orch approve ID` without --session/--intent")
                if scope == "intent" and not req.intent_id:
                    raise ApprovalError("the request has no intent to remember the grant for",
                                        hint="approve once or for this session")
            data: dict[str, Any] = {"id": req.id, "session_id": req.session_id, "decision": decision,
                                    "scope": scope, "reason": (reason or "").strip() or None, "by": by,
                                    "decided_at": now}
            if signed:
                data["assertion"] = assertion
            if intent is not None:
                data["intent"] = intent
            atomic_write(self.decision_path(request_id), json.dumps(data, indent=1).encode())
            grant = None
            if decision == "approve" and scope != "once" and not signed:
                grant = self._add_grant_locked(req, scope, by=by)
                data["grant"] = grant["id"]
        self.audit("decided", **{k: v for k, v in data.items() if k not in ("decided_at", "assertion")})
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
            with open(path, "rb") as fh:
                raw = fh.read(MAX_DECISION_BYTES + 1)
            if len(raw) > MAX_DECISION_BYTES:
                return {"id": request_id, "decision": "invalid",
                        "error": f"decision file over {MAX_DECISION_BYTES} bytes (not read)"}
            data = json.loads(raw)
        except (OSError, ValueError) as exc:
            return {"id": request_id, "decision": "invalid", "error": f"unreadable decision: {exc}"}
        if not isinstance(data, dict) or data.get("id") != request_id or data.get("decision") not in DECISIONS:
            return {"id": request_id, "decision": "invalid", "error": "decision file does not match the request"}
        return data

    def resolve(self, request: ApprovalRequest, *, timed_out: bool,
                decision: dict[str, Any] | None = None,
                apply: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
        """Close a request (under the lock): the final decision, archived to ``resolved/<id>.json``.

        ``decision``: the one the caller verified (the passkey channel), used as is whatever the decision file
        holds by now. Otherwise a decision that landed in the same instant as the timeout still wins; without
        one, a ``timeout`` decision is recorded. The request and decision files are then removed; the archive
        keeps both. ``apply``: what an approval *does* (an accepted intent proposal writes the intent), run under
        the lock on the final decision so that the decision and its effect are one step; what it returns is
        archived as the record's ``outcome`` (and returned as ``decision["outcome"]``).
        """
        with self._lock():
            dpath = self.decision_path(request.id)
            if decision is None and dpath.exists():
                decision = self._read_decision(dpath, request.id)
                if decision.get("session_id") not in (None, request.session_id):
                    decision = {"id": request.id, "decision": "invalid",
                                "error": "decision names another session"}
            elif decision is None:
                decision = {"id": request.id, "decision": "timeout" if timed_out else "invalid",
                            "decided_at": self.clock(), "by": "broker"}
            record = {"request": request.to_dict(), "decision": decision, "resolved_at": self.clock()}
            if apply is not None and decision.get("decision") == "approve":
                try:
                    outcome = apply(decision)
                except Exception as exc:  # noqa: BLE001 — the request is closed all the same, the error kept
                    outcome = {"error": f"{type(exc).__name__}: {exc}"}
                record["outcome"] = outcome
                decision = {**decision, "outcome": outcome}
            atomic_write_json(self.resolved_path(request.id), record)
            for p in (dpath, self.request_path(request.id)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        self.audit("resolved", id=request.id, session_id=request.session_id, outcome=decision.get("decision"),
                   by=decision.get("by"))
        return decision

    def refuse(self, request_id: str, data: dict[str, Any], error: str) -> None:
        """Set aside a decision the waiting side refused (bad or missing signature…): archived under
        ``refused/`` with the reason, so the request stays pending for a valid one. Only the decision that was
        read is removed: one written meanwhile stays for the next check."""
        refused_dir = self.dir / "refused"
        with self._lock():
            dpath = self.decision_path(request_id)
            if dpath.exists() and self._read_decision(dpath, request_id) == data:
                refused_dir.mkdir(parents=True, exist_ok=True)
                stamp = f"{int(self.clock() * 1000):x}-{os.urandom(2).hex()}"
                atomic_write_json(refused_dir / f"{request_id}.{stamp}.json",
                                  {"id": request_id, "error": error, "refused_at": self.clock(),
                                   "decision": {k: v for k, v in data.items() if k != "assertion"}})
                with contextlib.suppress(FileNotFoundError):
                    dpath.unlink()
        self.audit("decision-refused", id=request_id, error=error, by=data.get("by"))

    def last_refusal(self, request_id: str) -> str | None:
        """Why the latest refused decision on ``request_id`` was refused (None: none was)."""
        self._checked(request_id)
        found = sorted((self.dir / "refused").glob(f"{request_id}.*.json"))
        if not found:
            return None
        try:
            return str(json.loads(found[-1].read_bytes()).get("error") or "refused")
        except (OSError, ValueError):
            return "refused"

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

    def add_signed_grant(self, req: ApprovalRequest, decision: dict[str, Any]) -> dict[str, Any]:
        """Remember the grant of a verified signed decision, with its evidence (the signed fields and the
        assertion: :func:`orchestrator.approvals.signed.find_signed_grant` verifies it again on every use)."""
        with self._lock():
            grant = self._add_grant_locked(req, decision["scope"], by=str(decision.get("by")),
                                           evidence=decision.get("evidence"))
        self.audit("granted", **{k: v for k, v in grant.items() if k != "evidence"})
        return grant

    def _add_grant_locked(self, req: ApprovalRequest, scope: str, *, by: str,
                          evidence: dict[str, Any] | None = None) -> dict[str, Any]:
        now = self.clock()
        ttl = self.grant_ttl
        grant: dict[str, Any] = {
            "id": "g-" + os.urandom(4).hex(), "scope": scope, "worktree": req.worktree,
            "session_id": req.session_id if scope == "session" else None,
            "intent_id": req.intent_id if scope == "intent" else None,
            "risk": req.risk, "signature": req.signature, "created": now, "expires": now + ttl,
            "request_id": req.id, "by": by}
        if evidence is not None:
            grant["evidence"] = evidence
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
            if "evidence" in g:
                continue  # a passkey grant: only orchestrator.approvals.signed.find_signed_grant matches it
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
    return Broker(ctx.workspace.shared_run_dir, clock=clock,
                  grant_ttl=float(ctx.policy.approval.grant_ttl_seconds))


def branch_of(root: str) -> str | None:
    """The branch checked out in worktree ``root`` (shown to the reviewer), read from ``.git`` with the stdlib."""
    from orchestrator.vcs.worktrees import worktree_of

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


__all__ = ["CALL_ENV", "DECISIONS", "SCOPES", "Broker", "broker_for", "timeout_of"]
