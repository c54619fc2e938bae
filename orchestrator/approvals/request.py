"""Approval requests: the question a person answers (``<id>.request.json``), its errors and ids."""

from __future__ import annotations

import os
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from orchestrator.core.errors import OrchestratorError

_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


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
    #: the channel that asked: ``tui`` (decided in ``orch tui`` / ``orch approve``) or ``passkey`` (a decision needs
    #: the approver's passkey signature, which the waiting hook verifies: orchestrator.approvals.signed)
    channel: str = "tui"
    #: for a signed decision: a random nonce and the hash of the tool's input, both covered by the challenge
    nonce: str | None = None
    input_sha256: str | None = None
    #: the host's id of the call (a deferred call is found again by it when the host resumes)
    tool_use_id: str | None = None
    #: nobody waits: the host ended its turn with the call deferred (approval.headless: defer)
    deferred: bool = False
    #: an intent an agent proposes (``propose_intent``): name, owned_scope, constraints, acceptance_criteria,
    #: description; None for a tool call (see :mod:`orchestrator.approvals.proposal`)
    proposal: dict[str, Any] | None = None
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
        for key in ("command", "diff", "agent_id", "intent_id", "cwd", "worktree", "branch", "nonce", "input_sha256",
                    "tool_use_id"):
            if kwargs.get(key) is not None and not isinstance(kwargs[key], str):
                raise CorruptRequest(f"{source}: {key!r} must be a string", file=source)
        if kwargs.get("channel", "tui") not in ("tui", "passkey"):
            raise CorruptRequest(f"{source}: unknown channel {kwargs.get('channel')!r}", file=source)
        if not isinstance(kwargs.get("deferred", False), bool):
            raise CorruptRequest(f"{source}: 'deferred' must be a boolean", file=source)
        paths = kwargs.get("paths", [])
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise CorruptRequest(f"{source}: 'paths' must be a list of strings", file=source)
        proposal = kwargs.get("proposal")
        if proposal is not None and not _proposal_ok(proposal):
            raise CorruptRequest(f"{source}: 'proposal' must be an object of text and lists of text", file=source)
        return cls(**kwargs)

    def expired(self, now: float) -> bool:
        return now >= self.expires

    def where(self) -> str:
        """``worktree-name (branch)`` of the asking worktree, ``-`` when unknown (a request from before worktrees)."""
        if not self.worktree:
            return "-"
        name = os.path.basename(self.worktree.rstrip("/")) or self.worktree
        return f"{name} ({self.branch})" if self.branch else name


def _proposal_ok(proposal: Any) -> bool:
    if not isinstance(proposal, dict) or not isinstance(proposal.get("name"), str):
        return False
    for value in proposal.values():
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                return False
        elif value is not None and not isinstance(value, str):
            return False
    return True


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


__all__ = ["ApprovalError", "ApprovalRequest", "BrokenRequest", "CorruptRequest", "GrantRefused", "new_id", "valid_id"]
