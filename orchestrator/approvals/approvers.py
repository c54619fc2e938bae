"""The approvers file: the people whose passkeys may decide, one WebAuthn credential a line (stdlib only).

``.orchestration/approvers`` is a committed governance file (no agent tool writes it, no sandboxed command is
granted it: :mod:`orchestrator.core.governance`), written by the console when a person registers a passkey
(``orch approver add NAME``) and reviewed like ``trusted_keys``. A line::

    passkey <name> <rp id> <credential id, base64url> <COSE public key, base64url> [added=YYYY-MM-DD]

The public key is the credential's COSE key exactly as the authenticator gave it at registration; the WebAuthn
relying party id (``rp id``, the console's host name, e.g. ``localhost``) is the one it was registered for. Sign
counts are *not* here (they change on every use): the verifier keeps them in the approval broker's directory
(:mod:`orchestrator.approvals.passkey`).

A file with any malformed line is unusable as a whole (:class:`ApproversError` names the line): a typo must never
make the verifier trust more, and trusting *less* silently (skipping the line) would hide the mistake from the
person until a decision is refused for an unclear reason.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "approvers"
KIND = "passkey"
#: an approver's name: shown in the ledger and in `orch trace`; no spaces (the line format splits on them)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
_RP_ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")
_B64URL_RE = re.compile(r"^[A-Za-z0-9_-]+$")
#: credential ids are at most 1023 bytes (WebAuthn L3); a COSE key of an RSA-4096 credential is ~550 bytes
MAX_CREDENTIAL_ID = 1023
MAX_PUBLIC_KEY = 2048
HEADER = ("# orchestrator approvers: the passkeys whose signed decisions the approval hook accepts.\n"
          "# One line each, written by `orch approver add NAME` (docs/console.md); commit this file.\n"
          "# passkey <name> <rp id> <credential id> <COSE public key> [added=YYYY-MM-DD]\n")


class ApproversError(Exception):
    """The approvers file is missing, unreadable or malformed (the message says which line and why)."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Approver:
    """One registered passkey of one person."""

    name: str
    rp_id: str
    credential_id: str  # base64url, no padding (the form WebAuthn's JSON uses)
    public_key: bytes  # the COSE key
    added: str = ""

    def line(self) -> str:
        """The file line of this credential."""
        key = b64url(self.public_key)
        tail = f" added={self.added}" if self.added else ""
        return f"{KIND} {self.name} {self.rp_id} {self.credential_id} {key}{tail}"


def b64url(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str, *, limit: int = 1 << 16) -> bytes:
    """Decode base64url (padding optional); raises ValueError on anything else or beyond ``limit`` bytes."""
    if not isinstance(text, str) or not text or len(text) > limit * 4 // 3 + 4:
        raise ValueError("not a base64url string of an acceptable size")
    stripped = text.rstrip("=")
    if not _B64URL_RE.match(stripped):
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None


def path_of(orch_dir: str | os.PathLike[str]) -> Path:
    """``<.orchestration>/approvers``."""
    return Path(orch_dir) / FILE_NAME


def parse_line(line: str, where: str = FILE_NAME) -> Approver:
    """One credential line; raises :class:`ApproversError` naming ``where`` (``approvers:3``)."""
    parts = line.split()
    if len(parts) < 5 or parts[0] != KIND:
        raise ApproversError(f"{where}: not a '{KIND} <name> <rp id> <credential id> <public key>' line")
    _kind, name, rp_id, cred, key, *rest = parts
    if not NAME_RE.match(name):
        raise ApproversError(f"{where}: invalid approver name {name[:40]!r} (letters, digits, . _ @ + -)")
    if not _RP_ID_RE.match(rp_id):
        raise ApproversError(f"{where}: invalid relying party id {rp_id[:60]!r} (a host name such as localhost)")
    try:
        raw_id = unb64url(cred, limit=MAX_CREDENTIAL_ID)
        public_key = unb64url(key, limit=MAX_PUBLIC_KEY)
    except ValueError as exc:
        raise ApproversError(f"{where}: credential id or public key: {exc}") from None
    if len(raw_id) < 16:
        raise ApproversError(f"{where}: a credential id has at least 16 bytes, this one {len(raw_id)}")
    added = ""
    for option in rest:
        k, sep, v = option.partition("=")
        if not sep or k != "added":
            raise ApproversError(f"{where}: unknown option {option[:40]!r} (only added=YYYY-MM-DD)")
        added = v
    return Approver(name, rp_id, b64url(raw_id), public_key, added)


@dataclass(frozen=True)
class Approvers:
    """The parsed file: credentials by id."""

    path: str
    by_credential: dict[str, Approver]

    def names(self) -> list[str]:
        """Every approver's name once, in file order."""
        return list(dict.fromkeys(a.name for a in self.by_credential.values()))

    def for_rp(self, rp_id: str) -> list[Approver]:
        return [a for a in self.by_credential.values() if a.rp_id == rp_id]


def load(orch_dir: str | os.PathLike[str]) -> Approvers:
    """The approvers of a workspace; raises :class:`ApproversError` when the file is missing, unreadable or has
    any malformed or duplicate line."""
    path = path_of(orch_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ApproversError(f"no approvers file ({path})",
                             hint="register a passkey with `orch approver add NAME` and commit "
                                  ".orchestration/approvers") from None
    except OSError as exc:
        raise ApproversError(f"approvers file unreadable ({path}: {exc.strerror})") from None
    return parse(raw, str(path))


def parse(raw: bytes, path: str = FILE_NAME) -> Approvers:
    """Parse the bytes of an approvers file (see :func:`load`)."""
    if len(raw) > 1 << 20:
        raise ApproversError(f"approvers file too large ({len(raw)} bytes): {path}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApproversError(f"approvers file is not UTF-8: {path}") from None
    found: dict[str, Approver] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{FILE_NAME}:{n}"
        approver = parse_line(line, where)
        if approver.credential_id in found:
            raise ApproversError(f"{where}: credential {approver.credential_id[:16]}… is listed twice")
        found[approver.credential_id] = approver
    return Approvers(path, found)


def append(orch_dir: str | os.PathLike[str], approver: Approver) -> Path:
    """Add a credential line (creating the file with its header); refuses a credential id already listed.

    Written by the person's own console process (outside any sandbox), under a lock and atomically."""
    from orchestrator.core.fsutil import atomic_write, locked

    path = path_of(orch_dir)
    with locked(path.parent / "run" / "approvers.lock"):
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            old = HEADER.encode()
        current = parse(old, str(path))
        if approver.credential_id in current.by_credential:
            raise ApproversError(f"credential {approver.credential_id[:16]}… is already registered")
        text = old.decode("utf-8")
        if text and not text.endswith("\n"):
            text += "\n"
        atomic_write(path, (text + approver.line() + "\n").encode("utf-8"))
    return path


def remove(orch_dir: str | os.PathLike[str], name: str, credential_id: str | None = None) -> int:
    """Remove an approver's credentials (all, or the one ``credential_id``); the number removed."""
    from orchestrator.core.fsutil import atomic_write, locked

    path = path_of(orch_dir)
    with locked(path.parent / "run" / "approvers.lock"):
        raw = path.read_bytes()
        parse(raw, str(path))  # never rewrite a file we cannot read
        kept, gone = [], 0
        for line in raw.decode("utf-8").splitlines(keepends=True):
            parts = line.split()
            if len(parts) >= 4 and parts[0] == KIND and parts[1] == name and credential_id in (None, parts[3]):
                gone += 1
                continue
            kept.append(line)
        if gone:
            atomic_write(path, "".join(kept).encode("utf-8"))
    return gone


__all__ = ["FILE_NAME", "HEADER", "NAME_RE", "Approver", "Approvers", "ApproversError", "append", "b64url", "load",
           "parse", "parse_line", "path_of", "remove", "unb64url"]
