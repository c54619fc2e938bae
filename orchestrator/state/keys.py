"""This machine's ledger signing key, the team's trusted public keys and the local anchors (docs/ledger.md §4a).

Where things live (never inside a workspace, so no agent tool and no sandboxed command can read or rewrite them):

- the private key: ``$ORCH_KEY_DIR`` else ``$XDG_CONFIG_HOME/orchestrator/keys`` else
  ``~/.config/orchestrator/keys``, file ``ledger_ed25519.key`` (raw 32-byte Ed25519 seed in PEM/PKCS#8), created on
  first use with mode 0600 in a directory of mode 0700, next to ``ledger_ed25519.pub`` (the public line);
- the anchors: ``$XDG_STATE_HOME/orchestrator/anchors`` else ``~/.local/state/orchestrator/anchors``, one small JSON
  file per (ledger file, branch): the last head and line this machine appended;
- the trusted keys: ``.orchestration/trusted_keys`` in the workspace (committed, a governance file), one key a line
  in the ``authorized_keys`` style ``ed25519 <base64 of the 32-byte public key> [comment]``.

A key id is the first 16 hex digits of the sha256 of the raw public key. Only :func:`load_private` imports
``cryptography`` (~12 ms): the location and trusted-key helpers are stdlib only (the secret matcher and the
pre-hook path import this module).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_NAME = "ledger_ed25519.key"
PUB_NAME = "ledger_ed25519.pub"
TRUSTED_NAME = "trusted_keys"
ALG = "ed25519"


class KeyFileError(Exception):
    """A key file is missing, unreadable or malformed (message says which and why)."""


def key_dir() -> Path:
    """Directory of this machine's signing key (see the module docstring); not created here."""
    env = os.environ.get("ORCH_KEY_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".config"
    return base / "orchestrator" / "keys"


def private_key_path() -> Path:
    """The private key file (may not exist yet)."""
    return key_dir() / KEY_NAME


def state_dir() -> str:
    """This user's orchestrator state outside every workspace: ``$XDG_STATE_HOME/orchestrator`` else
    ``~/.local/state/orchestrator`` (a plain string: the sandbox's launcher check asks on the hook path)."""
    xdg = os.environ.get("XDG_STATE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "orchestrator")


def anchor_dir() -> Path:
    """Directory of the local anchors (see the module docstring); not created here."""
    return Path(state_dir()) / "anchors"


def key_id(raw_public: bytes) -> str:
    """The short id of a raw 32-byte public key: 16 hex digits of its sha256."""
    return hashlib.sha256(raw_public).hexdigest()[:16]


def public_line(raw_public: bytes, comment: str = "") -> str:
    """The ``ed25519 <base64> [comment]`` line of a public key (what ``trusted_keys`` holds)."""
    line = f"{ALG} {base64.b64encode(raw_public).decode('ascii')}"
    return f"{line} {comment}".rstrip() if comment else line


def parse_public_line(line: str) -> tuple[bytes, str]:
    """``(raw public key, comment)`` of one ``ed25519 <base64> [comment]`` line; raises :class:`KeyFileError`."""
    parts = line.strip().split(None, 2)
    if len(parts) < 2 or parts[0] != ALG:
        raise KeyFileError(f"not an '{ALG} <base64> [comment]' line: {line.strip()[:60]!r}")
    try:
        raw = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise KeyFileError(f"public key is not base64: {parts[1][:60]!r}") from None
    if len(raw) != 32:
        raise KeyFileError(f"an {ALG} public key has 32 bytes, this one {len(raw)}")
    return raw, parts[2] if len(parts) > 2 else ""


def trusted_path(orch_dir: str | os.PathLike[str]) -> Path:
    """``<.orchestration>/trusted_keys``."""
    return Path(orch_dir) / TRUSTED_NAME


def load_trusted(orch_dir: str | os.PathLike[str]) -> tuple[dict[str, bytes], list[str]] | None:
    """The trusted keys next to a ledger: ``({key id: raw public key}, [problems])``; None when the file is missing.

    A malformed line is a problem (reported by ``verify``), never a reason to trust less or more."""
    try:
        text = trusted_path(orch_dir).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as e:
        return {}, [f"{TRUSTED_NAME}: unreadable ({e.strerror})"]
    keys: dict[str, bytes] = {}
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw, _ = parse_public_line(line)
        except KeyFileError as e:
            problems.append(f"{TRUSTED_NAME}:{n}: {e}")
            continue
        keys[key_id(raw)] = raw
    return keys, problems


def add_trusted(orch_dir: str | os.PathLike[str], line: str) -> tuple[str, bool]:
    """Append a public key line to ``trusted_keys`` unless that key is there; returns ``(key id, added)``."""
    raw, comment = parse_public_line(line)
    kid = key_id(raw)
    found = load_trusted(orch_dir)
    if found is not None and kid in found[0]:
        return kid, False
    path = trusted_path(orch_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else \
        "# Public keys whose signatures on the trace ledger this team trusts (`orch key trust`, docs/ledger.md)\n"
    sep = "" if not old or old.endswith("\n") else "\n"
    path.write_text(old + sep + public_line(raw, comment) + "\n", encoding="utf-8")
    return kid, True


# ------------------------------------------------------------------------------------------------ private key

_lock = threading.Lock()
_cache: dict[tuple[str, int, int, int, int], Any] = {}


def _default_comment() -> str:
    import socket

    user = os.environ.get("USER") or os.environ.get("LOGNAME") or "user"
    return f"{user}@{socket.gethostname()}"


def _create(path: Path) -> None:
    """Generate a key at ``path`` (0600, directory 0700); a concurrent creator wins without harm (O_EXCL)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    try:
        os.link(tmp, path)  # atomic and never replaces: two first uses at once keep one key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    pub = path.with_name(PUB_NAME)
    if not pub.exists():
        pub.write_text(public_line(raw, _default_comment()) + "\n", encoding="utf-8")


def load_private(create: bool = True) -> Ed25519PrivateKey:
    """This machine's private key (created on first use when ``create``); cached by the file's stat key, so a long
    -lived daemon picks up a replaced key and never signs with a stale one. Raises :class:`KeyFileError`."""
    path = private_key_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not create:
            raise KeyFileError(f"no signing key at {path} (created on first use; `orch key show`)") from None
        with _lock:
            if not path.exists():
                _create(path)
        st = os.stat(path)
    if st.st_mode & 0o077:  # checked on every use: a chmod does not change the cache key
        raise KeyFileError(f"{path} is readable by others (mode {st.st_mode & 0o777:o}): chmod 600 it")
    skey = (str(path), st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    key = _cache.get(skey)
    if key is not None:
        return key
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as e:
        raise KeyFileError(f"{path}: not a readable Ed25519 private key ({e})") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 private key")
    with _lock:
        _cache.clear()
        _cache[skey] = loaded
    return loaded


def raw_public(key: Ed25519PrivateKey) -> bytes:
    """The raw 32 bytes of a private key's public half."""
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def own_public_line(create: bool = True) -> str:
    """This machine's public key line (the ``.pub`` file's comment kept when it matches the key)."""
    raw = raw_public(load_private(create))
    try:
        pub_raw, comment = parse_public_line(private_key_path().with_name(PUB_NAME).read_text(encoding="utf-8"))
        if pub_raw != raw:
            comment = _default_comment()
    except (OSError, KeyFileError):
        comment = _default_comment()
    return public_line(raw, comment)


__all__ = ["ALG", "KEY_NAME", "PUB_NAME", "TRUSTED_NAME", "KeyFileError", "key_dir", "private_key_path",
           "anchor_dir", "state_dir", "key_id", "public_line", "parse_public_line", "trusted_path", "load_trusted",
           "add_trusted", "load_private", "raw_public", "own_public_line", "check_signing"]


def check_signing(ws: Any) -> list:
    """``orch doctor``: this machine's signing key (present, private) and whether the workspace trusts it."""
    from orchestrator.core.findings import Finding

    path = private_key_path()
    out: list = []
    try:
        st = os.stat(path)
    except FileNotFoundError:
        out.append(Finding("ledger.key", "info", f"no signing key yet at {path}: created by the first signed record",
                           "orch key show (creates it now)"))
        own = None
    else:
        if st.st_mode & 0o077:
            out.append(Finding("ledger.key", "fail", f"{path} is readable by others (mode {st.st_mode & 0o777:o})",
                               f"chmod 600 {path}"))
        else:
            out.append(Finding("ledger.key", "ok", f"signing key {path} (mode 600)"))
        try:
            own = key_id(raw_public(load_private(create=False)))
        except KeyFileError as e:
            out.append(Finding("ledger.key", "fail", str(e), f"move {path} aside; the next signed record creates "
                               "a new key (then `orch key trust --self`)"))
            own = None
    found = load_trusted(ws.orch_dir)
    if found is None:
        out.append(Finding("ledger.trust", "warn", f"no {TRUSTED_NAME}: no signature in the ledger can be trusted",
                           "orch key trust --self, then commit .orchestration/trusted_keys"))
        return out
    trusted, problems = found
    for p in problems:
        out.append(Finding("ledger.trust", "warn", p, f"fix or remove the line in .orchestration/{TRUSTED_NAME}"))
    if own is not None and own not in trusted:
        out.append(Finding("ledger.trust", "warn", f"this machine's key {own} is not in {TRUSTED_NAME}: its records "
                           "fail `orch trace verify`", "orch key trust --self, then commit .orchestration/trusted_keys"))
    elif own is not None:
        out.append(Finding("ledger.trust", "ok", f"this machine's key {own} is trusted ({len(trusted)} key(s))"))
    return out
