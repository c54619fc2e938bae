"""The ledger index (orchestrator/ledger/index.py + lookup.py) answers exactly as the scan does.

Every test builds real ledgers (ledger.append, plus hand-written lines the writer never produces), opens the real
SQLite index and compares each answer of the index with the scan's: filters, `show`, blame events, stats — on
varied and generated ledgers, after appends, truncation, a rewritten middle, a torn tail and a real `git merge`
with the union driver; a planted or edited index is rebuilt, never believed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator import ledger
from orchestrator.ledger import blame, index, lookup, query
from orchestrator.ledger.index import LedgerIndex


@pytest.fixture(autouse=True)
def seal_key_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def record(i: int, *, intent: Any = "INT-1", session: Any = "sess-1", tool: Any = "Edit",
           cls: Any = "INTENT_EVOLUTION", paths: tuple = ("src/a.py",), rename_from: str | None = None,
           out_of_scope: Any = None, ts: Any = "2026-11-22T03:00:00.000000Z", agent: Any = "claude-code") -> dict:
    metas: list[dict] = []
    for p in paths:
        m: dict[str, Any] = {"path": p, "op": "modify", "added": i % 4, "removed": i % 3, "lines": 10}
        if rename_from is not None:
            m.update(op="rename", **{"from": rename_from})
        if out_of_scope is not None:
            m["out_of_scope"] = out_of_scope
        metas.append(m)
    ns: dict[str, Any] = {"intent_id": intent, "mutation_class": cls, "session_id": session, "tool_name": tool,
                          "agent": agent, "class_mismatch": i % 5 == 0, "files": metas}
    if out_of_scope is not None:
        ns["out_of_scope"] = out_of_scope
    return {"version": "0.1.0", "id": str(uuid.UUID(int=i * 7919 + 1, version=4)), "timestamp": ts,
            "vcs": {"type": "git", "revision": "a" * 40}, "tool": {"name": "orchestrator", "version": "0.1.0"},
            "files": [{"path": p, "conversations": [{"contributor": {"type": "ai"}, "ranges": [
                {"start_line": 1 + i % 7, "end_line": 2 + i % 7, "content_hash": "sha256:" + "b" * 64}]}]}
                      for p in paths],
            "metadata": {ledger.NS: ns}}


def varied(path: Path, n: int = 60, start: int = 0) -> None:
    """Canonical records with every field varying."""
    for i in range(start, start + n):
        ledger.append(path, record(
            i, intent=f"INT-{i % 3}", session=f"sess-{i % 4}{'x' * (i % 2)}", tool=("Edit", "Write", "Bash")[i % 3],
            cls=("AST_REFACTOR", "INTENT_EVOLUTION")[i % 2],
            paths=(("src/a.py",), ("src/sub/b.py", "docs/x.md"), ("src/é.py",), ('src/q"uote.py',))[i % 4],
            rename_from="src/old.py" if i == 7 else None, out_of_scope=True if i % 9 == 0 else None,
            ts=f"2026-11-{10 + i % 15:02d}T03:00:00.000000Z", agent=("claude-code", "codex")[i % 2]), fsync=False)


def odd_lines(path: Path) -> None:
    """Lines the writer never writes: non-canonical JSON, odd types, not JSON at all, a lone surrogate."""
    r = record(900, intent="INT-1", session="sess-1")
    with open(path, "ab") as f:
        f.write(json.dumps(r).encode() + b"\n")  # spaces after separators: the byte pre-filters fail
        f.write(json.dumps(record(901, intent="INT-é", paths=("src/ü.py",)), ensure_ascii=False).encode() + b"\n")
        f.write(json.dumps(record(902, intent=5, session=77, tool=None, cls=3, ts=17,
                                  paths=("src/a.py",))).encode() + b"\n")
        f.write(b"not json at all\n")
        f.write(b"[1, 2, 3]\n")
        f.write(json.dumps(record(903, session="s\ud800x", paths=("src/a.py",))).encode() + b"\n")
        bad_files = record(904)
        bad_files["files"] = [{"path": "src/a.py"}, "text"]
        f.write(json.dumps(bad_files, separators=(",", ":")).encode() + b"\n")
        moved = record(905, paths=("src/new.py",), rename_from="src/a.py")
        f.write(json.dumps(moved).encode() + b"\n")
        dup, _ = ledger.make_line(record(906, intent="INT-1"))  # a duplicated key: invalid, never a match
        f.write(dup.replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-2","intent_id":"INT-1"') + b"\n")
        f.write(json.dumps(record(907, intent="INT-1")).encode()[:-1] + b', "note": "\xff\xfe"}\n')  # not UTF-8
    varied(path, 5, start=950)
    from orchestrator.ledger.signing import local_signer
    signer = local_signer()
    for i in range(960, 964):  # signed records, as the post-hook appends them
        ledger.append(path, record(i, intent="INT-1", session="sess-1"), fsync=False, signer=signer)


def guarded(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 — the scan's errors must be the index's errors too
        return ("error", type(exc).__name__)


FILTERS = [query.Filters(), query.Filters(intent="INT-1"), query.Filters(intent="INT-2", cls="refactor"),
           query.Filters(intent="INT-é"), query.Filters(intent="nope"), query.Filters(session="sess-1"),
           query.Filters(session="sess"), query.Filters(session="s"), query.Filters(tool="edit"),
           query.Filters(tool="none"), query.Filters(cls="evolution"), query.Filters(file="src"),
           query.Filters(file="src/a.py"), query.Filters(file="src/*.py"), query.Filters(file="*"),
           query.Filters(file='src/q"uote.py'), query.Filters(file="src/é.py"), query.Filters(out_of_scope=True),
           query.Filters(since="2026-11-20T00:00:00"), query.Filters(intent="INT-0", since="2026-11-15"),
           query.Filters(file="docs", session="sess-1")]


def scan_answers(root: Path, path: Path) -> dict:
    out: dict[str, Any] = {}
    for k, f in enumerate(FILTERS):
        f = f.resolved()
        pre, pred = query.build_filter(f, root)
        out[f"list{k}"] = guarded(lambda: list(query.iter_matching(path, pre, pred)))
        out[f"last{k}"] = guarded(lambda: (lambda m: (len(m), m[-3:]))(list(query.iter_matching(path, pre, pred))))
        out[f"stats{k}"] = guarded(lambda: query.stats(path, pre, pred))
    for key in show_keys(path):
        out[f"show {key}"] = guarded(lambda: query.find_records(path, key))
    for rel in ("src/a.py", "src/new.py", "src/é.py", "docs/x.md", "nope.py"):
        out[f"blame {rel}"] = guarded(lambda: blame.file_events(path, blame.aliases(path, rel)))
    return out


def index_answers(root: Path, idx: LedgerIndex) -> dict:
    out: dict[str, Any] = {}
    for k, f in enumerate(FILTERS):
        f = f.resolved()
        pre, pred = query.build_filter(f, root)
        out[f"list{k}"] = guarded(lambda: list(lookup.iter_all(idx, f, root, pre, pred)))
        out[f"last{k}"] = guarded(lambda: lookup.select(idx, f, root, pre, pred, 3))
        out[f"stats{k}"] = guarded(lambda: lookup.stats(idx, f, root, pre, pred))
        assert lookup.select(idx, f, root, pre, pred, None)[1] == out[f"list{k}"][1]
    for key in show_keys(idx.ledger):
        out[f"show {key}"] = guarded(lambda: lookup.find_records(idx, key))
    for rel in ("src/a.py", "src/new.py", "src/é.py", "docs/x.md", "nope.py"):
        out[f"blame {rel}"] = guarded(lambda: lookup.file_events(idx, rel))
    return out


def show_keys(path: Path) -> list[str]:
    ids = [str(r.get("id")) for _, r in ledger.iter_records(path)]
    dup = str(uuid.UUID(int=906 * 7919 + 1, version=4))
    return ["L1", "L4", "L9999", "L0", "#2", "abc", "0000", "ffffffff", dup[:10]] + [i[:8] for i in ids[:3]] + \
        [i[:4] for i in ids[-2:]] + [f"L{n}" for n in range(len(ids) - 20, len(ids) + 14)]


def assert_same(path: Path, **open_kw: Any) -> LedgerIndex:
    root = path.parent.parent
    want = scan_answers(root, path)
    idx = LedgerIndex.open(path, min_bytes=0, **open_kw)
    assert idx is not None
    with idx:
        got = index_answers(root, idx)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == want[k], k
    return idx


@pytest.fixture
def led(tmp_path: Path) -> Path:
    path = tmp_path / "ws" / ".orchestration" / "agent_trace.jsonl"
    varied(path)
    odd_lines(path)
    return path


def test_varied_and_odd_lines_answer_as_the_scan(led: Path) -> None:
    idx = assert_same(led)
    assert idx.rebuilt
    with LedgerIndex.open(led, min_bytes=0) as again:  # type: ignore[union-attr]
        assert not again.rebuilt and again.lines == len(led.read_bytes().splitlines())
        assert len(again.odd_rows()) >= 4  # the hand-written lines are re-checked by the scan's code


def test_appends_are_indexed_incrementally(led: Path) -> None:
    assert_same(led)
    varied(led, 7, start=300)
    idx = assert_same(led)
    assert not idx.rebuilt


def test_lines_after_the_indexed_offset_are_scanned(led: Path) -> None:
    idx = LedgerIndex.open(led, min_bytes=0)
    assert idx is not None
    with idx:
        varied(led, 3, start=400)  # appended while the index is open: served from the tail
        with open(led, "ab") as f:
            f.write(json.dumps(record(410, intent="INT-1")).encode())  # a torn (but parseable) last line
        root = led.parent.parent
        assert index_answers(root, idx) == scan_answers(root, led)
    assert not assert_same(led).rebuilt  # the torn line is never indexed; the complete ones are


def test_truncation_resyncs(led: Path) -> None:
    assert_same(led)
    data = led.read_bytes()
    cut = data[:data.index(b"\n", len(data) // 2) + 1]
    led.write_bytes(cut)
    idx = assert_same(led)
    assert not idx.rebuilt and idx.resynced == idx.lines == cut.count(b"\n")
    varied(led, 3, start=700)  # and it goes on from there
    assert assert_same(led).resynced is None


def test_a_middle_line_rewritten_in_place_resyncs_from_that_line(led: Path) -> None:
    assert_same(led)
    data = led.read_bytes()
    at = data.index(b'"intent_id":"INT-1"')
    assert data.count(b'"intent_id":"INT-1"') > 2
    led.write_bytes(data.replace(b'"intent_id":"INT-1"', b'"intent_id":"INT-2"', 1))  # same inode, same size
    idx = assert_same(led)
    assert not idx.rebuilt and idx.resynced == data[:at].count(b"\n")


def test_a_rewritten_first_line_rebuilds(led: Path) -> None:
    assert_same(led)
    data = led.read_bytes()
    led.write_bytes(data.replace(b"INT-", b"INT-9", 1))
    assert assert_same(led).rebuilt


def test_a_rewritten_last_line_resyncs_even_after_an_append(led: Path) -> None:
    assert_same(led)
    lines = led.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].replace(b"INT-", b"INT-9", 1)
    led.write_bytes(b"".join(lines))
    varied(led, 2, start=500)
    assert assert_same(led).resynced == len(lines) - 1


def test_a_served_line_changed_behind_the_index_is_caught(led: Path) -> None:
    """The documented limit of the freshness check (same inode, same length, plus an append) is caught when the
    changed line is served: the index is discarded and the next open rebuilds."""
    assert_same(led)
    data = led.read_bytes()
    first = data.index(b'"intent_id":"INT-1"')
    with open(led, "r+b") as f:
        f.seek(first)
        f.write(b'"intent_id":"INT-2"')
    varied(led, 1, start=600)
    root = led.parent.parent
    f = query.Filters(intent="INT-1")
    pre, pred = query.build_filter(f, root)
    with LedgerIndex.open(led, min_bytes=0) as idx:  # type: ignore[union-attr]
        assert not idx.rebuilt
        with pytest.raises(lookup.IndexMismatch):
            list(lookup.iter_all(idx, f, root, pre, pred))
    assert assert_same(led).rebuilt


def test_a_union_merge_of_two_branches(tmp_path: Path) -> None:
    repo = tmp_path / "ws"
    path = repo / ".orchestration" / "agent_trace.jsonl"
    varied(path, 20)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)
    git("init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text(ledger.GITATTRIBUTES_LINE + "\n")
    (repo / ".gitignore").write_text(".orchestration/run/\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "other")
    varied(path, 6, start=100)
    git("commit", "-qam", "other")
    git("checkout", "-q", "main")
    varied(path, 5, start=200)
    git("commit", "-qam", "main")
    assert_same(path)
    git("merge", "-q", "--no-edit", "other")
    assert b"sha256" in path.read_bytes() and ledger.verify(path).ok
    idx = assert_same(path)  # ours came first, theirs after it: extended (same inode) or resynced (a new one)
    assert idx.lines == 31 and not idx.rebuilt and idx.resynced in (None, 25)
    git("checkout", "-q", "other")  # the other side's ledger: it parts from ours after the common 20 records
    idx = assert_same(path)
    assert idx.lines == 26 and not idx.rebuilt and idx.resynced == 20


def test_a_planted_or_edited_index_is_rebuilt_not_believed(led: Path, tmp_path: Path) -> None:
    assert_same(led)
    db = index.index_path(led)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE rec SET intent = 'INT-2' WHERE intent = 'INT-1'")  # hide INT-1's records
    conn.commit()
    conn.close()
    assert assert_same(led).rebuilt
    # an index copied from another ledger (with its seal) is not this ledger's
    other = tmp_path / "other" / ".orchestration" / "agent_trace.jsonl"
    varied(other, 10)
    assert_same(other)
    for suffix in ("", ".seal"):
        shutil.copy(str(index.index_path(other)) + suffix, str(db) + suffix)
    assert assert_same(led).rebuilt
    # a seal made with another key
    Path(str(db) + ".seal").write_text("0" * 64 + "\n")
    assert assert_same(led).rebuilt


def test_no_key_means_no_index(led: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocked))
    assert LedgerIndex.open(led, min_bytes=0) is None  # the caller scans
    assert not index.index_path(led).exists()


def test_a_big_ledger_is_built_by_worker_processes(led: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "PARALLEL_MIN_BYTES", 0)
    with open(led, "ab") as f:
        f.write(json.dumps(record(990)).encode())  # a torn last line: never indexed
    idx = assert_same(led, rebuild=True)
    assert idx.rebuilt and idx.lines == len(led.read_bytes().splitlines()) - 1
    assert not list(index.index_path(led).parent.glob("*.part*"))


def test_small_and_missing_ledgers_are_scanned(tmp_path: Path) -> None:
    path = tmp_path / ".orchestration" / "agent_trace.jsonl"
    assert LedgerIndex.open(path) is None
    varied(path, 3)
    assert LedgerIndex.open(path) is None  # below MIN_BYTES
    assert not index.index_path(path).exists()


def test_the_seal_key_is_private(led: Path, seal_key_home: Path) -> None:
    assert_same(led)
    key = index.seal_key_path()
    assert key.is_relative_to(seal_key_home)
    assert key.stat().st_mode & 0o777 == 0o600 and key.parent.stat().st_mode & 0o777 == 0o700


# ------------------------------------------------------------------------------------------ generated ledgers

_TEXT = st.sampled_from(["INT-1", "INT-2", "INT-é", "s", "sess-1", "sess-12", "", 'q"x', "a\\b", "\ud800", "x\n"])
_ANY = st.one_of(_TEXT, st.none(), st.integers(-2, 3), st.booleans(), st.lists(st.integers(0, 2), max_size=2))
_PATHS = st.lists(st.sampled_from(["src/a.py", "src/b.py", "src/sub/c.py", "docs/x.md", "src/é.py", 'q"x.py', "",
                                   "src"]), min_size=0, max_size=3)


@st.composite
def generated_record(draw: Any) -> tuple[dict, str]:
    i = draw(st.integers(0, 10_000))
    r = record(i, intent=draw(_ANY), session=draw(_ANY), tool=draw(_ANY), cls=draw(st.one_of(
        st.sampled_from(["AST_REFACTOR", "INTENT_EVOLUTION"]), _ANY)), paths=tuple(draw(_PATHS)),
        rename_from=draw(st.one_of(st.none(), st.sampled_from(["src/old.py", "src/a.py"]))),
        out_of_scope=draw(st.one_of(st.none(), _ANY)),
        ts=draw(st.one_of(st.sampled_from(["2026-11-22T03:00:00Z", "2026-11-10T03:00:00.000000Z", "late"]), _ANY)),
        agent=draw(_ANY))
    if draw(st.booleans()):
        r["id"] = draw(_ANY)
    return r, draw(st.sampled_from(["append", "spaces", "unicode", "compact"]))


def write_generated(path: Path, items: list[tuple[dict, str]]) -> None:
    for r, how in items:
        if how == "append":
            try:
                ledger.append(path, r, fsync=False)
                continue
            except (ledger.LedgerError, TypeError, ValueError):
                how = "compact"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            if how == "spaces":
                f.write(json.dumps(r).encode() + b"\n")
            elif how == "unicode":
                f.write(json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
            else:
                f.write(json.dumps(r, separators=(",", ":")).encode() + b"\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(first=st.lists(generated_record(), min_size=1, max_size=12),
       more=st.lists(generated_record(), min_size=0, max_size=6))
def test_generated_ledgers_answer_as_the_scan(first: list, more: list) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ws" / ".orchestration" / "agent_trace.jsonl"
        write_generated(path, first)
        assert_same(path)
        write_generated(path, more)
        assert_same(path)
        os.truncate(path, len(path.read_bytes()) // 2)  # a torn tail in the middle of a line
        assert_same(path)
