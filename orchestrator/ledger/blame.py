"""Attribute the current lines of a file to the ledger records that wrote them (``orch trace blame``, audit).

Three steps (docs/ledger.md §5):

1. **Replay**: the file's records (and those of files renamed into it) are replayed in ledger order, applying each
   record's ``hunks`` to a per-line owner list while each record's ``before`` equals the previous ``after`` (an
   unbroken chain of governed edits). At a break (an ungoverned edit in between) the model restarts from the
   breaking record's own ranges. With the per-line hashes a record carries (``line_hashes``), the model also knows
   the hash of every line it attributes.
2. **Alignment**: if the current file's sha256 equals the last ``after``, the model is exact (``how: tracked``).
   Otherwise the model's line hashes are aligned with the current file's (``difflib``, longest matching blocks), so
   lines survive unrelated hand edits anywhere in the file (``how: aligned``); a lone matched line whose text
   occurs elsewhere in the file is left to step 3, which decides by its neighbourhood.
3. **Search**: lines still unattributed are looked for in older records' ranges, newest first: a range's whole run
   of line hashes anywhere in the file (the copy whose recorded neighbourhood — ``context``, the hashes of the lines
   just outside the range — matches best, then the nearest), else its pieces of >= 2 consecutive lines (a recorded
   neighbour counts as a line of the piece, so one surviving line next to its recorded neighbour is found).
   Records without per-line hashes (older ledgers) are matched by the whole range's ``content_hash``.

Nothing here reads file contents from the ledger: there are none; only hashes are compared with the file on disk.
"""

from __future__ import annotations

import hashlib
import json
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Iterator

from orchestrator.core.diffing import hash_lines, line_hash, split_lines
from orchestrator.core.errors import OrchestratorError
from .format import NS
from .read import iter_lines, loads_record

__all__ = ["blame", "attribute", "file_events", "record_events", "aliases", "renames_of", "close_names",
           "BlameError"]



class BlameError(OrchestratorError):
    """The file cannot be read."""


def _ns(rec: dict) -> dict:
    md = rec.get("metadata")
    ns = md.get(NS) if isinstance(md, dict) else None
    return ns if isinstance(ns, dict) else {}


def _records(path: Path, needles: list[bytes]) -> Iterator[tuple[int, dict]]:
    if not path.exists():
        return
    for n, line in iter_lines(path):
        if needles and not any(x in line for x in needles):
            continue
        try:
            rec = loads_record(line)  # a record with a duplicated key attributes nothing
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield n, rec


def _jb(s: str) -> bytes:
    return json.dumps(s).encode("ascii")[1:-1]


def renames_of(r: dict) -> list[tuple[Any, Any]]:
    """``(from, to)`` of the renames record ``r`` lists (a line containing ``"from":``)."""
    return [(m["from"], m["path"]) for m in _ns(r).get("files") or ()
            if isinstance(m, dict) and m.get("op") == "rename" and m.get("from")]


def close_names(rel: str, renames: list[tuple[Any, Any]]) -> set[str]:
    """``rel`` and the paths renamed (possibly in a chain) into it, given every rename in ledger order."""
    names = {rel}
    changed = True
    while changed:
        changed = False
        for src, dst in renames:
            if dst in names and src not in names:
                names.add(src)
                changed = True
    return names


def aliases(path: Path, rel: str) -> set[str]:
    """``rel`` and the paths renamed (possibly in a chain) into it."""
    renames: list[tuple[Any, Any]] = []
    for _, r in _records(path, [b'"from":']):
        renames.extend(renames_of(r))
    return close_names(rel, renames)


def file_events(path: Path, names: set[str]) -> list[tuple[dict, dict, list[tuple]]]:
    """The ledger's events for the files ``names``, in order: (record info, per-file metadata, ranges)."""
    events: list[tuple[dict, dict, list[tuple]]] = []
    for n, r in _records(path, [_jb(x) for x in names]):
        events.extend(record_events(n, r, names))
    return events


def record_events(n: int, r: dict, names: set[str] | None = None) -> list[tuple[dict, dict, list[tuple]]]:
    """The events of one record (ledger line ``n``) for the files ``names`` (None: every file)."""
    out: list[tuple[dict, dict, list[tuple]]] = []
    ns = _ns(r)
    metas = {m.get("path"): m for m in ns.get("files") or () if isinstance(m, dict)}
    for f in r.get("files") or ():
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or (names is not None
                                                                            and f["path"] not in names):
            continue
        info = {"line": n, "id": r.get("id"), "timestamp": r.get("timestamp"), "intent_id": ns.get("intent_id"),
                "mutation_class": ns.get("mutation_class"), "tool": ns.get("tool_name"),
                "agent": ns.get("agent"), "session_id": ns.get("session_id"), "path": f.get("path"),
                "revision": (r.get("vcs") or {}).get("revision")}
        m = metas.get(f.get("path"), {})
        raw = [x for c in f.get("conversations") or () for x in c.get("ranges") or ()]
        lhs = m.get("line_hashes") if isinstance(m.get("line_hashes"), list) else None
        ctxs = m.get("context") if isinstance(m.get("context"), list) else None
        rngs = []
        for i, x in enumerate(raw):
            s_, e_ = int(x.get("start_line", 0)), int(x.get("end_line", 0))
            lh = lhs[i] if lhs is not None and i < len(lhs) and isinstance(lhs[i], list) \
                and len(lhs[i]) == e_ - s_ + 1 else None
            ctx = tuple(ctxs[i]) if ctxs is not None and i < len(ctxs) and isinstance(ctxs[i], list) \
                and len(ctxs[i]) == 2 else None
            rngs.append((s_, e_, x.get("content_hash"), lh, ctx))
        out.append((info, m, rngs))
    return out


def _replay(events: list) -> tuple[list | None, list | None, str | None]:
    """Owners and known line hashes after the last record (None when the last state is unknown)."""
    model: list[dict | None] | None = None
    hashes: list[str | None] | None = None
    model_hash: str | None = None
    for info, m, rngs in events:
        op, hunks, n_lines = m.get("op"), m.get("hunks"), m.get("lines")
        if op == "delete":
            model = hashes = model_hash = None
            continue
        if op == "rename":
            if model_hash != m.get("after"):
                model = hashes = model_hash = None
            continue
        if not isinstance(n_lines, int):
            model = hashes = model_hash = None
            continue
        if op == "create" and isinstance(hunks, list):
            model, hashes = [info] * n_lines, [None] * n_lines
        elif model is not None and hashes is not None and isinstance(hunks, list) and m.get("before") == model_hash:
            for h in reversed(hunks):
                os_, ol, _ns_, nl = h
                start = os_ - 1 if ol else os_
                model[start:start + ol] = [info] * nl
                hashes[start:start + ol] = [None] * nl
            if len(model) != n_lines:
                model = hashes = None
        else:  # a gap in the chain: only this record's own ranges are known
            model, hashes = [None] * n_lines, [None] * n_lines
            for s_, e_, _h, _lh, _c in rngs:
                for i in range(max(s_ - 1, 0), min(e_, n_lines)):
                    model[i] = info
        if model is not None and hashes is not None:
            for s_, e_, _h, lh, _c in rngs:
                if lh is not None and e_ <= len(hashes):
                    hashes[s_ - 1:e_] = lh
        model_hash = m.get("after")
    return model, hashes, model_hash


def blame(root: Path, ledger_path: Path, rel: str, *, events: list | None = None) -> dict:
    """Attribute each current line of ``rel`` (workspace-relative) to a record, or None; see the module docstring.

    Returns ``{"path", "lines", "tracked", "runs": [{"start_line", "end_line", "record": info | None}]}``.
    ``events``: the file's ledger events when the caller has them already (from the index: ``ledger.lookup``).
    """
    if events is None:
        events = file_events(ledger_path, aliases(ledger_path, rel))
    try:
        data = (root / rel).read_bytes()
    except OSError:
        raise BlameError(f"blame: cannot read {rel}") from None
    lines = split_lines(data.decode("utf-8", "surrogateescape"))
    return attribute(events, lines, "sha256:" + hashlib.sha256(data).hexdigest(), rel)


def attribute(events: list, lines: list[str], file_sha: str, rel: str) -> dict:
    """The attribution of ``lines`` (the current file) given the file's ledger ``events``."""
    model, mhashes, model_hash = _replay(events)
    n = len(lines)
    tracked = model is not None and len(model) == n and model_hash == file_sha
    owner: list[dict | None]
    if tracked and model is not None:
        owner = [dict(o, how="tracked") if o is not None else None for o in model]
    else:
        owner = [None] * n
    cur = [line_hash(x) for x in lines] if (not tracked or None in owner) and n else []
    if not tracked and model is not None and mhashes is not None and cur:
        # 2. align the replayed model with today's file (hand edits since / between the records)
        a = [h if (h is not None and o is not None) else i for i, (h, o) in enumerate(zip(mhashes, model))]
        sm = SequenceMatcher(None, a, cur, autojunk=False)
        freq: dict[str, int] = {}
        for h in cur:
            freq[h] = freq.get(h, 0) + 1
        for i, j, k in sm.get_matching_blocks():
            if k == 1 and freq.get(cur[j], 0) > 1:
                continue  # one isolated line that occurs elsewhere too: step 3 decides by its neighbourhood
            for d in range(k):
                o = model[i + d]
                if o is not None:
                    owner[j + d] = dict(o, how="aligned")
    if None in owner and cur:
        _search(events, lines, cur, owner)
    return {"path": rel, "lines": n, "tracked": tracked, "runs": _runs(owner, rel)}


def _search(events: list, lines: list[str], cur: list[str], owner: list[dict | None]) -> None:
    """3. older records' ranges, newest first (see the module docstring)."""
    n = len(cur)
    index: dict[str, list[int]] = {}
    for i, h in enumerate(cur):
        index.setdefault(h, []).append(i)
    sm: SequenceMatcher | None = None
    windows: dict[int, dict[str, list[int]]] = {}
    for info, _m, rngs in reversed(events):
        for s_, e_, h, lh, ctx in rngs:
            if None not in owner:
                return
            size = e_ - s_ + 1
            if size < 1:
                continue
            if lh is None:  # an older record: the whole range by its content hash
                at = _locate_whole(lines, h, size, s_, windows) if h else None
                if at is not None:
                    _give(owner, range(at, at + size), info, s_, e_, at)
                continue
            starts = [p for p in index.get(lh[0], ()) if cur[p:p + size] == lh]
            if starts:
                def score(p: int) -> tuple[int, int]:
                    c = 0
                    if ctx is not None:
                        c += ctx[0] is not None and p > 0 and cur[p - 1] == ctx[0]
                        c += ctx[1] is not None and p + size < n and cur[p + size] == ctx[1]
                    free = sum(owner[q] is None for q in range(p, p + size))
                    return (-(c + 2 * (free == size)), abs(p - (s_ - 1)))
                p = min(starts, key=score)
                _give(owner, range(p, p + size), info, s_, e_, p)
                continue
            # pieces: recorded neighbours take part in the match but are not attributed
            pat = ([ctx[0]] if ctx and ctx[0] else []) + list(lh) + ([ctx[1]] if ctx and ctx[1] else [])
            off = 1 if ctx and ctx[0] else 0
            if sm is None:
                sm = SequenceMatcher(None, b=cur, autojunk=False)
            sm.set_seq1(pat)
            for i, j, k in sm.get_matching_blocks():
                if k < 2:
                    continue
                idx = [j + d for d in range(k) if off <= i + d < off + size]
                _give(owner, idx, info, s_, e_, idx[0] if idx else j)


def _give(owner: list, idx: Any, info: dict, s_: int, e_: int, at: int) -> None:
    for q in idx:
        if owner[q] is None:
            owner[q] = dict(info, how="content", recorded=[s_, e_], now=[at + 1, at + 1 + (e_ - s_)])


def _locate_whole(lines: list[str], h: str, size: int, s: int, windows: dict) -> int | None:
    """0-based start of ``size`` lines hashing to ``h``: at the recorded place, else the nearest anywhere."""
    if 1 <= s and s + size - 1 <= len(lines) and hash_lines(lines[s - 1:s - 1 + size]) == h:
        return s - 1
    if size > len(lines):
        return None
    if size not in windows:
        idx: dict[str, list[int]] = {}
        for i in range(len(lines) - size + 1):
            idx.setdefault(hash_lines(lines[i:i + size]), []).append(i)
        windows[size] = idx
    starts = windows[size].get(h)
    return min(starts, key=lambda x: abs(x - (s - 1))) if starts else None


def _runs(owner: list[dict | None], rel: str) -> list[dict]:
    def key(o: dict | None) -> tuple | None:
        return None if o is None else (o["line"], o["how"], tuple(o.get("recorded") or ()))

    runs: list[dict] = []
    for i, o in enumerate(owner, 1):
        if runs and key(runs[-1]["_o"]) == key(o):
            runs[-1]["end_line"] = i
        else:
            runs.append({"start_line": i, "end_line": i, "_o": o})
    for run in runs:
        o = run.pop("_o")
        rec = None
        if o is not None:
            rec = {k: v for k, v in o.items() if k not in ("now", "revision")}
            rec["moved"] = bool(o.get("now") and o["recorded"][0] != o["now"][0]) or o.get("path") != rel
        run["record"] = rec
    return runs
