"""The index build's fast path (orchestrator/ledger/indexfast.py) gives exactly the rows of the full parse.

Every line of real ledgers written by ``ledger.append`` (and lines the writer never writes) goes through both the
fast path and :func:`index.parsed_row`; where the fast path takes a line, both rows must be identical. A canonical
line with a duplicated key, or any line with a backslash, must be left to the full parse (which marks it odd).
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator import ledger
from orchestrator.ledger import index
from orchestrator.ledger.indexfast import fast_row


def rec(i: int, *, intent: Any = "INT-1", session: Any = "sess-1", tool: str = "Edit", agent: Any = "claude-code",
        paths: tuple = ("src/a.py",), rename_from: str | None = None, mismatch: bool = False,
        cls: str = "AST_REFACTOR", ts: str = "2026-11-22T03:00:00.000000Z") -> dict:
    metas: list[dict[str, Any]] = []
    for k, p in enumerate(paths):
        m: dict[str, Any] = {"path": p, "op": "rename" if rename_from is not None else "modify",
                             "added": (i + k) % 5, "removed": i % 3}
        if rename_from is not None:
            m["from"] = rename_from
        m.update(before="sha256:" + "1" * 64, after="sha256:" + "2" * 64, lines=10, hunks=[[1, 2, 1, 3]])
        metas.append(m)
    return {"version": "0.1.0", "id": str(uuid.UUID(int=i + 1, version=4)), "timestamp": ts,
            "vcs": {"type": "git", "revision": "c" * 40}, "tool": {"name": "orchestrator", "version": "0.1.0"},
            "files": [{"path": p, "conversations": [{"contributor": {"type": "ai", "model_id": "m/x"},
                                                     "ranges": [{"start_line": 1, "end_line": 2}]}]} for p in paths],
            "metadata": {ledger.NS: {"intent_id": intent, "mutation_class": cls, "declared_class": None,
                                     "class_mismatch": mismatch, "evidence": "python: changed body: f",
                                     "session_id": session, "agent": agent, "agent_id": None, "tool_name": tool,
                                     "tool_use_id": f"toolu_{i}", "files": metas}}}


def both(raw: bytes) -> tuple[Any, Any]:
    sha = hashlib.sha256(raw).digest()
    return fast_row(7, 100, raw, sha, index.PLAIN), index.parsed_row(7, 100, raw, sha)


def line(r: dict) -> bytes:
    return ledger.make_line(r)[0] + b"\n"


@pytest.mark.parametrize("r", [
    rec(1), rec(2, intent=None, session=None, agent=None), rec(3, session="", intent="", tool=""),
    rec(4, paths=("src/a.py", "docs/b.md", "x y/z.txt")), rec(5, rename_from="src/old.py", paths=("src/new.py",)),
    rec(6, rename_from="", paths=("src/new.py",)), rec(7, mismatch=True, cls="INTENT_EVOLUTION", tool="MultiEdit"),
    rec(8, ts="2026-11-22T03:00:00+02:00"), rec(9, ts="2026-11-22T03:00:00Z"), rec(10, paths=()),
])
def test_canonical_lines_take_the_fast_path_with_the_same_rows(r: dict) -> None:
    fast, full = both(line(r))
    assert fast is not None
    assert fast == full
    assert fast[0][4] == index.PLAIN


def test_signed_and_merge_lines_take_the_fast_path(tmp_path: Path) -> None:
    from orchestrator.ledger.signing import local_signer
    path = tmp_path / "agent_trace.jsonl"
    signer = local_signer()
    for i in range(4):
        ledger.append(path, rec(i, rename_from="a.py" if i == 2 else None), fsync=False, signer=signer)
    raws = path.read_bytes().splitlines(keepends=True)
    raws.append(ledger.make_line(rec(9), parents=["sha256:" + "3" * 64])[0] + b"\n")
    for raw in raws:
        fast, full = both(raw)
        assert fast is not None and fast == full


def test_a_canonical_line_with_a_duplicated_key_goes_to_the_full_parse() -> None:
    raw = line(rec(1, intent="INT-1"))
    for dup in (raw.replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-2","intent_id":"INT-1"'),
                raw.replace(b'"added":1,', b'"added":1,"added":4,'),
                raw.replace(b'"tool_name":"Edit"', b'"tool_name":"Bash","tool_name":"Edit"'),
                raw.replace(b'{"type":"ai"', b'{"type":"ai","type":"human"')):
        assert dup != raw
        fast, full = both(dup)
        assert fast is None
        assert full[0][4] == index.ODD  # the scan's code decides (it skips the line; `show` calls it invalid)
        assert index.extract(7, 100, dup) == full


def test_lines_the_writer_never_writes_go_to_the_full_parse() -> None:
    import json
    r = rec(1, paths=('src/q"uote.py',))
    for raw in (line(r), line(rec(2, paths=("src/é.py",))), json.dumps(rec(3)).encode() + b"\n",
                line(rec(4))[:-1], line(rec(5)).replace(b"\n", b"\r\n"), b"not json\n",
                line(rec(6))[:-1] + b" \n", line(rec(7, intent="INT-1")).replace(b"INT-1", b"INT-\x7f1"),
                line(rec(8, paths=("a\x7fb",)))):
        fast, _ = both(raw)
        assert fast is None


_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=127), max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(i=st.integers(0, 10_000), intent=st.one_of(st.none(), _TEXT), session=st.one_of(st.none(), _TEXT),
       agent=st.one_of(st.none(), _TEXT), tool=_TEXT, paths=st.lists(_TEXT, max_size=3),
       rename_from=st.one_of(st.none(), _TEXT), mismatch=st.booleans(),
       cls=st.sampled_from(["AST_REFACTOR", "INTENT_EVOLUTION"]))
def test_generated_canonical_lines_give_the_rows_of_the_full_parse(**kw: Any) -> None:
    paths = tuple(kw.pop("paths"))
    raw = line(rec(kw.pop("i"), paths=paths, **kw))
    fast, full = both(raw)
    assert fast == full or (fast is None and (b"\\" in raw or b"\x7f" in raw))
    raw_del = raw.replace(b"\\u007f", b"\x7f")  # hand-written: a raw DEL where the writer escapes it
    fast, full = both(raw_del)
    assert fast is None or fast == full

