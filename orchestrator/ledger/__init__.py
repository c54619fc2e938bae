"""The trace ledger: an append-only, hash-chained JSONL file (``.orchestration/agent_trace.jsonl``).

Modules (everything below is re-exported here, so ``from orchestrator import ledger`` keeps working):
    :mod:`.format` constants, record layout, chain tail, line hashes; :mod:`.write` :func:`append` (lock + chain,
    torn-tail quarantine, heads cache); :mod:`.read` streamed lines/records; :mod:`.schema` structural check, the
    fast canonical-line regex, jsonschema; :mod:`.verifier` :func:`verify` and :func:`repair` (both imported on
    first use of their names: the post-hook imports this package for :func:`append` only). Not re-exported here:
    :mod:`.query` (filters, stats, export), :mod:`.blame` and :mod:`.audit` (import them from their modules).

Each line is one Agent Trace 0.1.0 record (see ``orchestrator/data/agent-trace.schema.json``); orchestrator's own
fields live under ``metadata["dev.orchestrator"]`` and the chain under ``metadata["dev.orchestrator"]["chain"]``.

Writing (:func:`append`)
    open with ``O_APPEND``, take an exclusive ``fcntl.flock`` on ``run/<ledger>.lock`` (never on the ledger itself,
    which a sandboxed command can open for reading and lock), read the last line's hash, build the line, **one**
    ``os.write`` of the whole line, ``fdatasync`` (default; ``fsync=False`` to skip), close (releases the lock).
    If the file does not end with ``"\\n"`` (a writer died mid-write) the torn tail is first moved to the quarantine
    file ``<ledger>.quarantine`` (appended, fsynced, then the ledger is truncated to the last complete line) so a new
    record is never glued onto a fragment. Nothing is ever deleted.

Line layout and hashes
    The line is ``json.dumps(record, separators=(",", ":"), ensure_ascii=True)`` with insertion order kept and
    ``metadata`` last, ``"dev.orchestrator"`` last in it and ``chain`` last in that, so every line ends with the
    fixed-size tail ``"chain":{"prev":"sha256:<64 hex>","hash":"sha256:<64 hex>"}}}}``.
    ``hash`` = sha256 of the exact line bytes with the hash *value* (``sha256:<hex>``) replaced by the empty string
    (i.e. of the line as it was before the hash was filled in). It covers every byte of the line, ``prev`` included.
    ``prev`` = the ``hash`` of the line that was last in the file when this record was appended, or
    :data:`GENESIS` for the first record.

Chain rule (what :func:`verify` accepts), designed so that a ``git merge`` with the union merge driver of two
branches that both appended records verifies, while edits, deletions and reorderings are still detected:
    1. every line is complete (ends with ``"\\n"``), has the fixed tail, and its ``hash`` matches its bytes
       (an edited byte anywhere in the line fails here, at that line);
    2. its ``prev`` is :data:`GENESIS` or the hash of an **earlier** line of the file — normally the line just
       before; after a union merge the first record of the "theirs" block points back to the common ancestor
       record, which is earlier in the file (a fork). A deleted record leaves its successor pointing at a hash that
       does not exist; swapping two lines makes the first of them point at a *later* line: both fail, at the line
       where the chain breaks;
    3. every hash in its optional ``merge_parents`` list also refers to an earlier line. The first record written
       after a merge lists there every other dangling head of the chain (the newest record of the "ours" block,
       which nothing else points to), so deleting that record is detected as well: it joins the merge back into
       one chain, like a merge commit;
    4. no hash appears twice (a duplicated/replayed line fails);
    5. the record passes the schema check (below).
    Known limits, inherent to any unsigned hash chain: removing the newest records (those no later record points
    to yet, e.g. right after a merge before anything else is appended) or rewriting a record together with every
    record after it (recomputing all hashes) is not detectable from the file alone; the git history of the
    versioned ledger is the anchor for that.
    Memory stays bounded: a first pass collects only the *non-linear* links (prev != previous line's hash, i.e. one
    per merge or per tampering) and the hashes of records carrying them; the second pass keeps just those.

Schema check
    :func:`check_record` is a hand-written structural check of everything the JSON schema requires (required keys,
    types, enums, integer minimums, version pattern, uuid shape, timestamp shape) plus orchestrator's metadata fields.
    Lines in the writer's canonical layout are checked by an equivalent compiled regex instead (``_canonical()``, no
    JSON parsing); other lines are parsed and go through :func:`check_record`.
    ``verify(strict=True)`` additionally runs full ``jsonschema`` (a dev extra) with format checking on every line;
    if jsonschema is not importable, strict falls back to the structural check and says so in the result.

May import: ``core``, ``state`` (the machine key), ``vcs``, ``classify``; never the post-hook that writes it.
"""

from __future__ import annotations

from .format import (GENESIS, GITATTRIBUTES_LINE, NS, SPEC_VERSION, TAIL_LEN, LedgerError, line_hash, make_line,
                     quarantine_path, schema_path)
from typing import TYPE_CHECKING, Any

from .read import iter_lines, iter_records, tail_lines
from .write import append, scan_tips, tips_path

if TYPE_CHECKING:  # imported lazily below: the writer's path needs neither the schema regex nor the verifier
    from .schema import check_record
    from .verifier import PARALLEL_MIN_BYTES, RepairResult, VerifyResult, repair, verify

__all__ = [
    "NS",
    "SPEC_VERSION",
    "GENESIS",
    "GITATTRIBUTES_LINE",
    "TAIL_LEN",
    "PARALLEL_MIN_BYTES",
    "LedgerError",
    "VerifyResult",
    "RepairResult",
    "append",
    "make_line",
    "line_hash",
    "iter_lines",
    "iter_records",
    "tail_lines",
    "check_record",
    "verify",
    "repair",
    "quarantine_path",
    "scan_tips",
    "tips_path",
    "schema_path",
]

#: names served on first use (PEP 562), so that ``import orchestrator.ledger`` in the post-hook stays the writer
_LAZY = {"check_record": "schema", "verify": "verifier", "repair": "verifier", "VerifyResult": "verifier",
         "RepairResult": "verifier", "PARALLEL_MIN_BYTES": "verifier"}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
