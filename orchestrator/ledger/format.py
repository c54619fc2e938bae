"""The line format of the trace ledger: constants, record layout, the fixed chain tail and line hashes.

See :mod:`orchestrator.ledger` (the package docstring) for the layout and the chain rule. Imported by the writer
on the post-hook's path: stdlib only, nothing compiled at import.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

NS = "dev.orchestrator"
SPEC_VERSION = "0.1.0"
GENESIS = "sha256:" + "0" * 64
#: The line ``orch init`` writes to ``.gitattributes`` so ``git merge`` unions concurrent appends.
GITATTRIBUTES_LINE = ".orchestration/agent_trace.jsonl merge=union"

# Fixed-size tail of every line (see module docstring).
_T_HEAD = b'"chain":{"prev":"sha256:'
_T_MID = b'","hash":"sha256:'
_T_END = b'"}}}}'
_HEXLEN = 64
TAIL_LEN = len(_T_HEAD) + _HEXLEN + len(_T_MID) + _HEXLEN + len(_T_END)
_O_PREV = len(_T_HEAD)
_O_MID = _O_PREV + _HEXLEN
_O_HASH = _O_MID + len(_T_MID)
_O_END = _O_HASH + _HEXLEN
_HASHVAL_LEN = len("sha256:") + _HEXLEN  # what is blanked for hashing
_HEX_RE = re.compile(rb"[0-9a-f]{64}")


#: domain separation of ledger signatures (:mod:`orchestrator.ledger.signing`): never valid over anything else
DOMAIN = b"orchestrator-ledger-sig-v1\n"
_V_LEN = 88  # base64 of a 64-byte Ed25519 signature


class LedgerError(Exception):
    """The ledger could not be written or read as expected."""


def schema_path() -> Path:
    """Path of the bundled Agent Trace JSON schema (the package does not depend on ../shared at runtime)."""
    return Path(__file__).resolve().parent.parent / "data" / "agent-trace.schema.json"


def quarantine_path(ledger: str | os.PathLike[str]) -> Path:
    """Where torn tails are moved: ``<ledger>.quarantine`` next to the ledger."""
    return Path(os.fspath(ledger) + ".quarantine")


# --------------------------------------------------------------------------------------------------- line format

def _ordered(record: dict, prev: str, parents: list[str] | None = None, sig: dict | None = None) -> dict:
    """Copy of ``record`` with metadata/NS/chain moved last and the chain set to ``prev`` + empty hash (and the
    signature block, value empty, just before the chain)."""
    rec = {k: v for k, v in record.items() if k != "metadata"}
    md_in = record.get("metadata") or {}
    md = {k: v for k, v in md_in.items() if k != NS}
    ns = {k: v for k, v in (md_in.get(NS) or {}).items() if k not in ("chain", "merge_parents", "sig")}
    if parents:
        ns["merge_parents"] = list(parents)
    if sig is not None:
        ns["sig"] = sig
    ns["chain"] = {"prev": prev, "hash": ""}
    md[NS] = ns
    rec["metadata"] = md
    return rec


def make_line(record: dict, prev: str = GENESIS, parents: list[str] | None = None, *, signer: Any = None,
              ledger_id: str = GENESIS) -> tuple[bytes, dict]:
    """Serialise ``record`` chained after ``prev`` (and merge ``parents``); returns ``(line, record with chain)``.

    With a ``signer`` (:class:`~orchestrator.ledger.signing.Signer`) the line carries a signature block for the
    ledger ``ledger_id`` (:func:`~orchestrator.ledger.signing.ledger_identity`), signed before the chain hash is
    computed, so the hash covers the signature."""
    sig = sig_fields(signer.key_id, ledger_id) if signer is not None else None
    rec = _ordered(record, prev, parents, sig)
    blank = json.dumps(rec, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    if not blank.endswith(b'"hash":""}}}}'):
        raise LedgerError("record layout broken: metadata must be the last key")  # pragma: no cover
    if signer is not None:
        blank, value = sign_blank(blank, signer.sign)
        rec["metadata"][NS]["sig"]["value"] = value
    h = "sha256:" + hashlib.sha256(blank).hexdigest()
    line = blank[:-len(_T_END)] + h.encode("ascii") + _T_END
    rec["metadata"][NS]["chain"]["hash"] = h
    return line, rec


def sig_fields(key_id: str, ledger: str) -> dict[str, str]:
    """The ``sig`` object of a line with an empty value (what is signed; :mod:`orchestrator.ledger.signing`)."""
    return {"alg": "ed25519", "key": key_id, "ledger": ledger, "value": ""}


def sign_blank(blank: bytes, sign: Any) -> tuple[bytes, str]:
    """Fill the empty signature ``value`` of a serialised line whose chain hash is still blank with
    ``sign(DOMAIN + blank)`` (base64); returns the new bytes and the value."""
    import base64

    marker = b'"value":""},"chain":'
    k = blank.rindex(marker) + len(b'"value":"')
    value = base64.b64encode(sign(DOMAIN + blank))
    if len(value) != _V_LEN:  # pragma: no cover - Ed25519 signatures are 64 bytes
        raise LedgerError("unexpected signature length")
    return blank[:k] + value + blank[k:], value.decode("ascii")


def _split_tail(line: bytes) -> tuple[bytes, bytes] | None:
    """``(prev_hex, hash_hex)`` from a line (no newline) if it has the fixed tail, else None."""
    t = line[-TAIL_LEN:]
    if (len(t) != TAIL_LEN or t[:_O_PREV] != _T_HEAD or t[_O_MID:_O_HASH] != _T_MID or t[_O_END:] != _T_END):
        return None
    return t[_O_PREV:_O_MID], t[_O_HASH:_O_END]


def line_hash(line: bytes) -> str:
    """Recompute a line's chain hash from its bytes (newline excluded): sha256 with the hash value blanked."""
    blank = line[:-(len(_T_END) + _HASHVAL_LEN)] + _T_END
    return "sha256:" + hashlib.sha256(blank).hexdigest()


_MP_KEY = b'"merge_parents":['
_MP_RE = re.compile(rb'"merge_parents":\[((?:"sha256:[0-9a-f]{64}",?)*)\]')


def _merge_parents(line: bytes) -> list[bytes]:
    """Hex digests listed in a line's ``merge_parents`` (fast path: most lines have none)."""
    if _MP_KEY not in line:
        return []
    m = _MP_RE.search(line)
    return re.findall(rb"sha256:([0-9a-f]{64})", m.group(1)) if m else [b"<malformed>"]

