"""Ed25519 signatures on ledger lines (docs/ledger.md §4a): the signature block, the signed message, the check.

A signed line carries, as the last key of ``metadata["dev.orchestrator"]`` before ``chain``, a fixed-size block::

    "sig":{"alg":"ed25519","key":"<16 hex>","ledger":"sha256:<64 hex>","value":"<88 base64>"}

- ``key``: the signer's key id (:func:`orchestrator.state.keys.key_id`);
- ``ledger``: the ledger's identity, the sha256 of the raw bytes of the file's **first line** (without its newline),
  or :data:`~orchestrator.ledger.format.GENESIS` on the first line itself: a record replayed from another ledger
  (another repository, or another ledger's first record) names another identity;
- ``value``: the Ed25519 signature (base64, 88 characters) of :data:`DOMAIN` followed by the line's bytes with
  ``value`` and the chain ``hash`` both blanked to ``""`` — so it covers every other byte of the line, the chain's
  ``prev`` and ``merge_parents`` included (the position of the record in the chain), and the chain ``hash`` then
  covers the signature.

Fixed size and position make the check a slice of the line's bytes (no JSON parsing). The cryptography itself is
``cryptography``'s Ed25519 (a maintained, audited implementation), imported only when a key is loaded or a line is
checked: never on the pre-hook's path.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from .format import _HASHVAL_LEN, _T_END, _V_LEN, DOMAIN, GENESIS, TAIL_LEN, sig_fields, sign_blank

_SIG_RE = re.compile(rb',"sig":\{"alg":"ed25519","key":"([0-9a-f]{16})","ledger":"(sha256:[0-9a-f]{64})",'
                     rb'"value":"([A-Za-z0-9+/]{86}==)"\},')
SIG_LEN = len(b',"sig":{"alg":"ed25519","key":"","ledger":"sha256:","value":""},') + 16 + 64 + _V_LEN
_V_END = TAIL_LEN + 3  # the value ends 3 bytes ('"},') before the chain tail


def ledger_identity(first_line: bytes | None) -> str:
    """The ``ledger`` value of a record: sha256 of the file's first line (no newline), GENESIS for the first."""
    if first_line is None:
        return GENESIS
    return "sha256:" + hashlib.sha256(first_line).hexdigest()


def parse(line: bytes) -> tuple[str, str, bytes, bytes] | None:
    """``(key id, ledger, signature, signed message)`` of a line (no newline) with a signature block, else None."""
    seg = line[-(TAIL_LEN + SIG_LEN):-TAIL_LEN]
    m = _SIG_RE.fullmatch(seg)
    if m is None:
        return None
    try:
        sig = base64.b64decode(m.group(3), validate=True)
    except ValueError:
        return None
    vend = len(line) - _V_END
    msg = DOMAIN + line[:vend - _V_LEN] + line[vend:-(len(_T_END) + _HASHVAL_LEN)] + _T_END
    return m.group(1).decode("ascii"), m.group(2).decode("ascii"), sig, msg


def has_sig_key(line: bytes) -> bool:
    """Whether a line mentions a ``sig`` object at all (a misplaced or malformed block is not 'unsigned')."""
    return b'"sig":{' in line


class Checker:
    """Checks signatures against a set of trusted keys, with the public key objects built once."""

    def __init__(self, trusted: dict[str, bytes]) -> None:
        self.trusted = dict(trusted)
        self._pub: dict[str, Any] = {}

    def check(self, line: bytes, expected_ledger: str) -> tuple[str, str] | None:
        """None when the line is validly signed by a trusted key for ``expected_ledger``, else ``(kind, key id)``
        with kind ``unsigned`` / ``malformed`` / ``unknown-key`` / ``bad-signature`` / ``other-ledger``."""
        parsed = parse(line)
        if parsed is None:
            return ("malformed", "") if has_sig_key(line) else ("unsigned", "")
        kid, ledger, sig, msg = parsed
        raw = self.trusted.get(kid)
        if raw is None:
            return "unknown-key", kid
        pub = self._pub.get(kid)
        if pub is None:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

            pub = self._pub[kid] = Ed25519PublicKey.from_public_bytes(raw)
        from cryptography.exceptions import InvalidSignature

        try:
            pub.verify(sig, msg)
        except InvalidSignature:
            return "bad-signature", kid
        if ledger != expected_ledger:
            return "other-ledger", kid
        return None


class Signer:
    """Signs ledger lines with a private key (``cryptography``'s Ed25519PrivateKey)."""

    def __init__(self, private_key: Any, key_id: str) -> None:
        self._key = private_key
        self.key_id = key_id

    def sign(self, message: bytes) -> bytes:
        """The 64-byte signature of ``message``."""
        return self._key.sign(message)


_signers: dict[int, Signer] = {}


def local_signer() -> Signer:
    """This machine's signer (key created on first use; the key is cached by its file's stat key, so a daemon
    follows a replaced key); raises ``keys.KeyFileError``."""
    from orchestrator.state import keys

    key = keys.load_private(create=True)
    signer = _signers.get(id(key))
    if signer is None or signer._key is not key:
        _signers.clear()
        signer = _signers[id(key)] = Signer(key, keys.key_id(keys.raw_public(key)))
    return signer


__all__ = ["DOMAIN", "SIG_LEN", "ledger_identity", "sig_fields", "sign_blank", "parse", "has_sig_key", "Checker",
           "Signer", "local_signer"]
