"""Reading the ledger: raw lines and parsed records, streamed with constant memory; the last lines (the console)."""

from __future__ import annotations

import json
import os
from typing import Iterator

from .format import LedgerError

class DuplicateKeyError(ValueError):
    """A JSON object in a record names the same key twice (which value is 'the' value is up to the parser)."""


def _no_dups(pairs: list[tuple[str, object]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise DuplicateKeyError(f"duplicate key {dup!r}")
    return d


_decoder = json.JSONDecoder(object_pairs_hook=_no_dups)


def loads_record(line: bytes | str) -> object:
    """``json.loads`` that rejects duplicate keys (:class:`DuplicateKeyError`, a ValueError): a record with
    ``"intent_id":"INT-1","intent_id":"EVIL"`` is invalid, never shown with either value."""
    text = line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line
    return _decoder.decode(text.strip())


def _open_lines(path: str | os.PathLike[str], start: int = 0):
    """A binary file positioned at ``start``; iterating it yields raw lines (C-speed, bounded memory)."""
    f = open(path, "rb", buffering=1 << 20)
    f.seek(start)
    return f


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw line bytes including its newline if any)``; constant memory."""
    with open(path, "rb", buffering=1 << 20) as f:
        for i, line in enumerate(f, 1):
            yield i, line


def iter_records(path: str | os.PathLike[str], *, contains: bytes | None = None,
                 skip_bad: bool = True) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)``; constant memory.

    ``contains``: cheap byte pre-filter applied before JSON parsing (callers re-check the parsed field).
    Lines that are not JSON objects (torn tail, corruption, a duplicated key) are skipped, or raise
    :class:`LedgerError` if ``skip_bad`` is False.
    """
    if not os.path.exists(path):
        return
    loads = loads_record
    for i, line in iter_lines(path):
        if contains is not None and contains not in line:
            continue
        try:
            obj = loads(line)
        except DuplicateKeyError as e:
            if skip_bad:
                continue
            raise LedgerError(f"line {i}: {e} (an invalid record)") from None
        except ValueError:
            if skip_bad:
                continue
            raise LedgerError(f"line {i}: not valid JSON") from None
        if isinstance(obj, dict):
            yield i, obj
        elif not skip_bad:
            raise LedgerError(f"line {i}: not a JSON object")


def tail_lines(path: str | os.PathLike[str], n: int, *, block: int = 8192) -> list[bytes]:
    """The last ``n`` non-empty lines of ``path`` (read backwards in blocks; never the whole file)."""
    if n <= 0:
        return []
    try:
        fh = open(path, "rb")
    except OSError:
        return []
    with fh:
        fh.seek(0, os.SEEK_END)
        pos = fh.tell()
        data = b""
        while pos > 0 and data.count(b"\n") <= n:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            data = fh.read(step) + data
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    if pos > 0 and lines:
        lines = lines[1:] if len(lines) > n else lines  # the first one may be cut
    return lines[-n:]
