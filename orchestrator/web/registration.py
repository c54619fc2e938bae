"""Passkey registration tickets: ``orch approver add NAME`` opens one, the console's page completes it.

A ticket is a file under the run directory (``.orchestration/run/console/registrations/``: no sandboxed command
writes there) named by the SHA-256 of a random token; the token itself exists only in the URL that
``orch approver add`` prints to the person (``…/#register=<token>``: a fragment, never sent in a request line or
logged). Completing a ticket needs the token, the console's CSRF token and Origin, and a WebAuthn registration
whose challenge is the ticket's: so a credential is added to ``.orchestration/approvers`` only for a ticket the
person opened at their own terminal, once, before it expires (:data:`TICKET_TTL`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.approvals.approvers import NAME_RE, b64url
from orchestrator.approvals.request import ApprovalError

TICKET_TTL = 600.0


class RegistrationError(ApprovalError):
    """A registration ticket is unknown, expired, already used, or the credential was refused."""

    type = "registration-refused"


@dataclass
class Ticket:
    name: str
    created: float
    expires: float
    challenge: str  # base64url, 32 random bytes
    user_id: str  # base64url, 16 random bytes (the WebAuthn user handle)
    done: bool = False
    credential_id: str | None = None
    error: str | None = None


def _dir(run_dir: str | os.PathLike[str]) -> Path:
    return Path(run_dir) / "console" / "registrations"


def _path(run_dir: str | os.PathLike[str], token: str) -> Path:
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise RegistrationError("malformed registration token", hint="use the URL `orch approver add` printed")
    return _dir(run_dir) / (hashlib.sha256(token.encode()).hexdigest()[:40] + ".json")


def create(run_dir: str | os.PathLike[str], name: str, *, now: float | None = None) -> tuple[str, Ticket]:
    """A new ticket for approver ``name``: ``(token, ticket)``."""
    from orchestrator.core.fsutil import atomic_write_json

    if not NAME_RE.match(name):
        raise RegistrationError(f"invalid approver name {name[:40]!r}",
                                hint="letters, digits and . _ @ + - (no spaces), at most 64 characters")
    now = time.time() if now is None else now
    token = b64url(os.urandom(32))
    ticket = Ticket(name, now, now + TICKET_TTL, b64url(os.urandom(32)), b64url(os.urandom(16)))
    path = _path(run_dir, token)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, asdict(ticket))
    return token, ticket


def load(run_dir: str | os.PathLike[str], token: str, *, now: float | None = None, pending: bool = True) -> Ticket:
    """The ticket of ``token``; with ``pending`` it must be neither used nor expired."""
    path = _path(run_dir, token)
    try:
        data: Any = json.loads(path.read_bytes())
        ticket = Ticket(**{k: data[k] for k in Ticket.__dataclass_fields__ if k in data})
    except FileNotFoundError:
        raise RegistrationError("unknown registration token",
                                hint="run `orch approver add NAME` again and open the URL it prints") from None
    except (OSError, ValueError, TypeError) as exc:
        raise RegistrationError(f"unreadable registration ticket ({exc})") from None
    if pending:
        if ticket.done:
            raise RegistrationError("this registration link was already used")
        if (time.time() if now is None else now) >= ticket.expires:
            raise RegistrationError("this registration link expired", hint="run `orch approver add NAME` again")
    return ticket


def claim(run_dir: str | os.PathLike[str], token: str) -> Ticket:
    """Take the ticket for one completion attempt (under a lock, so two attempts cannot both add a credential);
    the ticket is used from now on, whatever the attempt's outcome (:func:`record`)."""
    from orchestrator.core.fsutil import atomic_write_json, locked

    with locked(_dir(run_dir) / ".lock"):
        ticket = load(run_dir, token)
        ticket.done = True
        atomic_write_json(_path(run_dir, token), asdict(ticket))
    return ticket


def record(run_dir: str | os.PathLike[str], token: str, *, credential_id: str | None = None,
           error: str | None = None) -> None:
    """What a claimed ticket's attempt gave: the credential added, or the error that ended it."""
    from orchestrator.core.fsutil import atomic_write_json

    ticket = load(run_dir, token, pending=False)
    ticket.credential_id, ticket.error = credential_id, error
    atomic_write_json(_path(run_dir, token), asdict(ticket))


def peek(run_dir: str | os.PathLike[str], token: str) -> Ticket:
    """The ticket whatever its state (for ``orch approver add`` waiting on it)."""
    return load(run_dir, token, pending=False)


__all__ = ["TICKET_TTL", "RegistrationError", "Ticket", "claim", "create", "load", "peek", "record"]
