"""The index build's fast path: the row of a ledger line in the writer's canonical layout, without a JSON parse.

Building the index from scratch parses every line; with :func:`.read.loads_record` (which rejects duplicate keys
through a Python hook on every JSON object) that parse is most of the per-line cost. Almost every line of a real
ledger is exactly what :func:`.format.make_line` wrote, so for those the index reads the few fields it stores with
targeted regexes instead.

Why this cannot change an answer: a line takes this path only when

  * it contains no backslash (so every ``"`` delimits a string, no string needs unescaping, and a key pattern such
    as ``{"path":"`` cannot occur inside a string value) and no DEL byte (the one character the canonical regex
    admits raw that ``json.dumps`` would escape: the full path's byte checks, ``_jb``, would not find it), and
  * it fully matches the canonical-layout regex of ``verify`` (:func:`.schema._canonical`): the writer's key order,
    compact separators, ASCII only. That layout names every key of every object at most once, so such a line has
    no duplicate key, parses as JSON, and its parsed record has exactly the fields read here, at the places read.

Every other line, and any line where something here does not go as expected (returns None), goes through
:func:`.index.extract`'s full parse. The values are computed as :func:`.index._extract_record` computes them from the
parsed record (``tests/ledger/test_index.py`` compares both paths line by line).
"""

from __future__ import annotations

import re
from typing import Any

from .query import _record_ts
from .schema import _canonical

_HEAD = re.compile(rb'\{"version":"[^"]*","id":"([^"]*)","timestamp":"([^"]*)"')
_NS = re.compile(rb'"dev\.orchestrator":\{"intent_id":(null|"[^"]*"),"mutation_class":"([^"]*)",'
                 rb'"declared_class":(?:null|"[^"]*"),"class_mismatch":(true|false),"evidence":"[^"]*",'
                 rb'"session_id":(null|"[^"]*"),"agent":(null|"[^"]*"),"agent_id":(?:null|"[^"]*"),'
                 rb'"tool_name":"([^"]*)"')
#: a top-level ``files`` entry (only those have the key "conversations")
_TOP_PATH = re.compile(rb'\{"path":"([^"]*)","conversations":\[')
#: a ``dev.orchestrator.files`` entry (only those have the key "op"); "from" comes after the optional class pair
_META = re.compile(rb'\{"path":"([^"]*)","op":"([a-z]*)","added":([0-9]+),"removed":([0-9]+)'
                   rb'(?:,"mutation_class":"[^"]*","evidence":"[^"]*")?(?:,"from":"([^"]*)")?')


def _s(v: bytes) -> str | None:
    """A captured ``null`` or ``"string"`` (no escapes: the line has no backslash) as the parser returns it."""
    return None if v == b"null" else v[1:-1].decode("ascii")


def fast_row(n: int, off: int, raw: bytes, sha: bytes, plain: int) -> tuple[tuple, list[tuple], list[tuple]] | None:
    """The ``rec``/``path``/``ren`` rows of a canonical line (``raw`` ends with its newline), or None: parse it."""
    if (b"\\" in raw or b"\x7f" in raw or raw[-1:] != b"\n"
            or _canonical().fullmatch(raw, 0, len(raw) - 1) is None):
        return None
    head, ns = _HEAD.match(raw), _NS.search(raw)
    if head is None or ns is None:  # pragma: no cover - implied by the canonical match
        return None
    rid, ts = head.group(1).decode("ascii"), head.group(2).decode("ascii")
    intent_v, cls_b, mismatch, session_v, agent_v, tool_b = ns.groups()
    intent, session, agent = _s(intent_v), _s(session_v), _s(agent_v)
    cls, tool_name = cls_b.decode("ascii"), tool_b.decode("ascii")
    paths = [p.decode("ascii") for p in _TOP_PATH.findall(raw)]
    nfiles = added = removed = 0
    renames: list[tuple[str, str]] = []
    for m in _META.finditer(raw, ns.end()):
        path, op, a, r, src = m.groups()
        nfiles += 1
        added += int(a)
        removed += int(r)
        if op == b"rename" and src:  # `m.get("op") == "rename" and m.get("from")`: a non-empty string
            renames.append((src.decode("ascii"), path.decode("ascii")))
    st: tuple[Any, ...] = (str(intent or "(none)"), cls, tool_name or "?", agent or "?", nfiles, added, removed,
                           1 if mismatch == b"true" else 0)
    row = (n, off, len(raw), sha, plain, rid, _record_ts(ts), intent, session or "", tool_name.lower(), cls, 0) + st
    return row, [(n, p) for p in paths], [(n, a_, b_) for a_, b_ in renames]
