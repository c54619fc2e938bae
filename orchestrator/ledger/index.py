"""The ledger index: a local SQLite sidecar that makes ``orch trace`` filters, ``show``, ``blame`` and ``stats``
fast on big ledgers without ever changing their answers (docs/ledger.md §5, "The index").

Where: ``<ledger dir>/run/<ledger name>.index.sqlite`` (``.orchestration/run/``: runtime state, gitignored), with
``.seal`` and ``.lock`` beside it. Only the query side builds or reads it (on the first query after appends):
the post-hook's append path does not know it exists.

What it holds: one row per ledger line (line number, byte offset, length, sha256 of the raw line bytes, and the
fields the filters select by), one row per file path a record names, one per rename. Every field is stored exactly
as the scan's predicate *and* its byte pre-filter compute it (:mod:`.query`), so SQL selects exactly the lines the
scan would; a line where that cannot be guaranteed (a hand-written record whose fields are not in the writer's
canonical form, non-string values, unencodable text) is marked *odd* and is always re-checked by the scan's own
code. Lines that are not JSON objects are kept (for ``show L123``) but never match.

Why it cannot change an answer:
  * **Freshness**: the index remembers the ledger's identity (device, inode), size and mtime, the byte offset it
    reached and the offset, length and sha256 of the last line it indexed. Same stat: nothing to do. Grown: the
    last indexed line must still be byte-identical, then only the new complete lines are indexed. Anything else
    (replaced file, truncation, same size but rewritten, the last indexed line changed, e.g. after a ``git merge``
    or ``checkout``) *resyncs*: every line is compared with its indexed length and sha256 from the start, the rows
    from the first difference on are dropped and the rest is indexed again (a rebuild from scratch when not even
    the first line is the same).
  * **Served lines are re-read**: every line an answer contains is read from the ledger at its offset, its sha256
    is compared with the index's, and the scan's own pre-filter and predicate are applied again; a mismatch
    discards the index (:class:`IndexMismatch`) and the caller answers from the scan.
  * **Planted indexes**: a seal file holds an HMAC (key ``index-seal.key``, created on first use beside the ledger
    signing key in :func:`orchestrator.state.keys.key_dir`: outside every workspace, unreadable to sandboxed commands,
    mode 0600) over the ledger path and the database file's device, inode, size, mtime and ctime as they were when
    this machine last wrote it. A database copied in, checked
    out from git or edited fails the seal and is rebuilt. Without the key the index is not used at all.
  Known limit: a middle line rewritten *in place* (same inode, same length) in the same interval as an append is
  not seen by the freshness check (finding it needs reading the whole file); it is seen when the line is served
  (sha256 mismatch) and by ``orch trace verify`` (the chain breaks there). Counts that are not served line by line
  (``stats``) would still include the old values until the next rebuild (``orch trace index --rebuild``).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from .indexfast import fast_row
from .query import _record_ts, ns_of
from .read import DuplicateKeyError, loads_record

__all__ = ["LedgerIndex", "IndexMismatch", "index_path", "seal_key_path", "MIN_BYTES", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2
#: below this ledger size the scan is fast enough (about 3,000 records): no index is built
MIN_BYTES = 4 * 1024 * 1024
#: kinds of rows
PLAIN, ODD, BAD = 0, 1, 2
_CLASSES = ("AST_REFACTOR", "INTENT_EVOLUTION")

_SCHEMA = """
CREATE TABLE meta(k TEXT PRIMARY KEY, v);
CREATE TABLE rec(line INTEGER PRIMARY KEY, off INTEGER NOT NULL, len INTEGER NOT NULL, sha BLOB NOT NULL,
  kind INTEGER NOT NULL, id TEXT, ts TEXT, intent TEXT, session TEXT, tool TEXT, cls TEXT, oos INTEGER,
  s_intent TEXT, s_cls TEXT, s_tool TEXT, s_agent TEXT, nfiles INTEGER, added INTEGER, removed INTEGER,
  mismatch INTEGER);
CREATE TABLE path(line INTEGER NOT NULL, path TEXT NOT NULL);
CREATE TABLE ren(line INTEGER NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL);
"""
_INDEXES = """
CREATE INDEX rec_intent ON rec(intent);
CREATE INDEX rec_session ON rec(session);
CREATE INDEX rec_id ON rec(id);
CREATE INDEX rec_ts ON rec(ts);
CREATE INDEX rec_odd ON rec(kind) WHERE kind = 1;
CREATE INDEX path_path ON path(path);
"""
_N_COLS = 20


class IndexMismatch(Exception):
    """The index disagrees with the ledger (a served line changed): it is discarded; answer from the scan."""


def index_path(ledger: str | os.PathLike[str]) -> Path:
    """``<ledger dir>/run/<ledger name>.index.sqlite`` (runtime state, gitignored with the rest of ``run/``)."""
    p = Path(os.fspath(ledger))
    return p.parent / "run" / (p.name + ".index.sqlite")


def seal_key_path() -> Path:
    """The HMAC key sealing this machine's indexes: beside the ledger signing key, outside every workspace, in the
    directory no sandboxed command may read (:func:`orchestrator.state.keys.key_dir`)."""
    from orchestrator.state.keys import key_dir

    return key_dir() / "index-seal.key"


def _seal_key() -> bytes:
    path = seal_key_path()
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, os.urandom(32))
    finally:
        os.close(fd)
    return path.read_bytes()


_PLAIN = re.compile(r'[ !#-\[\]-~]*')  # printable ASCII but `"` and `\`: json.dumps leaves it as it is


def _jb(value: str) -> bytes:
    """How a string appears inside a canonical ledger line (json, ensure_ascii), quotes included."""
    if _PLAIN.fullmatch(value):
        return b'"' + value.encode("ascii") + b'"'
    return json.dumps(value).encode("ascii")


def _utf8_ok(*values: Any) -> bool:
    try:
        for v in values:
            if isinstance(v, str):
                v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# ----------------------------------------------------------------------------------------------- row extraction

def _files_of(rec: dict, raw: bytes) -> tuple[list[str], bool]:
    """The paths ``--file`` and ``blame`` compare (as the scan computes them), and whether the line is odd."""
    files = rec.get("files") or ()
    if not isinstance(files, (list, tuple, str, dict)):
        return [], True  # the scan's loop would fail on it: let the scan's own code decide
    paths: list[str] = []
    for f in files:
        p = f.get("path", "") if isinstance(f, dict) else ""
        if not isinstance(p, str) or _jb(p)[1:-1] not in raw:
            return [], True
        paths.append(p)
    return paths, False


def _renames_of(ns: dict, raw: bytes) -> tuple[list[tuple[str, str]], bool]:
    """``(from, to)`` of the record's renames as ``blame.aliases`` reads them (only lines containing ``"from":``)."""
    if b'"from":' not in raw:
        return [], False
    out: list[tuple[str, str]] = []
    files = ns.get("files") or ()
    if not isinstance(files, (list, tuple)):
        return [], True
    for m in files:
        if isinstance(m, dict) and m.get("op") == "rename" and m.get("from"):
            src, dst = m.get("from"), m.get("path")
            if not isinstance(src, str) or not isinstance(dst, str):
                return [], True
            out.append((src, dst))
    return out, False


def _stat_fields(ns: dict) -> tuple[Any, ...] | None:
    """The per-record contributions to ``stats`` exactly as :func:`.query.stats` computes them (None: odd)."""
    try:
        nfiles = added = removed = 0
        for m in ns.get("files") or ():
            if isinstance(m, dict):
                nfiles += 1
                added += int(m.get("added") or 0)
                removed += int(m.get("removed") or 0)
        cls = ns.get("mutation_class")
        hash(cls)  # the scan looks it up in a dict: a list there raises, so this line is the scan's to decide
        return (str(ns.get("intent_id") or "(none)"), cls if isinstance(cls, str) and cls in _CLASSES else None,
                str(ns.get("tool_name") or "?"), str(ns.get("agent") or "?"), nfiles, added, removed,
                1 if ns.get("class_mismatch") else 0)
    except Exception:  # noqa: BLE001 — the scan would raise here too: the odd path runs the scan's code
        return None


def extract(n: int, off: int, raw: bytes) -> tuple[tuple, list[tuple], list[tuple]]:
    """The ``rec`` row, ``path`` rows and ``ren`` rows of ledger line ``n`` (``raw``: its bytes, newline included)."""
    sha = hashlib.sha256(raw).digest()
    fast = fast_row(n, off, raw, sha, PLAIN)  # the writer's own layout: no JSON parse (see .indexfast)
    return fast if fast is not None else parsed_row(n, off, raw, sha)


def parsed_row(n: int, off: int, raw: bytes, sha: bytes) -> tuple[tuple, list[tuple], list[tuple]]:
    """:func:`extract` through the full, duplicate-rejecting parse (every line the fast path does not take)."""
    try:
        rec = loads_record(raw)
    except DuplicateKeyError:  # never a match, but `show` names it an invalid record: the scan's code decides
        return (n, off, len(raw), sha, ODD) + (None,) * (_N_COLS - 5), [], []
    except ValueError:
        rec = None
    if not isinstance(rec, dict):
        return (n, off, len(raw), sha, BAD) + (None,) * (_N_COLS - 5), [], []
    try:
        return _extract_record(n, off, raw, sha, rec)
    except Exception:  # noqa: BLE001 — anything unexpected: the scan's code decides for this line
        return (n, off, len(raw), sha, ODD) + (None,) * (_N_COLS - 5), [], []


def _extract_record(n: int, off: int, raw: bytes, sha: bytes, rec: dict) -> tuple[tuple, list[tuple], list[tuple]]:
    ns = ns_of(rec)
    odd = False
    rid = rec.get("id")
    if not (isinstance(rid, str) and rid.isascii() and b'"id":"' + rid.encode("ascii") in raw):
        rid, odd = None, True
    intent = ns.get("intent_id")
    intent = intent if isinstance(intent, str) and b'"intent_id":' + _jb(intent) in raw else None
    session: str | None = str(ns.get("session_id") or "")
    if session and b'"session_id":' + _jb(session)[:-1] not in raw:
        odd = True
    cls = ns.get("mutation_class")
    cls = cls if isinstance(cls, str) and b'"mutation_class":' + _jb(cls) in raw else None
    oos = 1 if ns.get("out_of_scope") and b'"out_of_scope":' in raw else 0
    paths, odd_f = _files_of(rec, raw)
    renames, odd_r = _renames_of(ns, raw)
    st = _stat_fields(ns)
    ts: str | None = _record_ts(str(rec.get("timestamp", "")))
    tool: str | None = str(ns.get("tool_name", "")).lower()
    odd = odd or odd_f or odd_r or st is None
    # a lone surrogate (from a \\udXXX escape or raw bytes) cannot be stored: only then are the strings checked
    if not odd and (not raw.isascii() or b"\\ud" in raw or b"\\uD" in raw) and not _utf8_ok(
            intent, session, cls, ts, tool, *(st or ()), *paths, *(x for r in renames for x in r)):
        odd = True
    if odd:  # nothing SQL selects by: the scan's code decides (filter columns NULL, no path or rename rows)
        return (n, off, len(raw), sha, ODD) + (None,) * (_N_COLS - 5), [], []
    assert st is not None
    row = (n, off, len(raw), sha, PLAIN, rid, ts, intent, session, tool, cls, oos) + tuple(st)
    return row, [(n, p) for p in paths], [(n, a, b) for a, b in renames]


# ------------------------------------------------------------------------------------------------------ index

class LedgerIndex:
    """An open, fresh, sealed index of one ledger; use as a context manager (holds the index lock).

    :meth:`open` returns None when no index can serve (ledger missing or small, no key, unwritable run dir): the
    caller scans. ``min_bytes`` lowers the size threshold (tests, ``orch trace index``).
    """

    def __init__(self, ledger: Path, db: Path, conn: sqlite3.Connection, lock_fd: int, meta: dict) -> None:
        self.ledger = ledger
        self.db = db
        self.conn = conn
        self._lock_fd = lock_fd
        self.meta = meta
        self.rebuilt = bool(meta.get("_rebuilt"))
        #: lines kept by a resync (the ledger was replaced or rewritten; its identical start was kept), else None
        self.resynced: int | None = meta.get("_resynced")
        self._fh: Any = None

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(cls, ledger: str | os.PathLike[str], *, min_bytes: int | None = None,
             rebuild: bool = False) -> LedgerIndex | None:
        """The fresh index of ``ledger`` (built or brought up to date first), or None to scan instead."""
        ledger = Path(os.fspath(ledger))
        try:
            st = os.stat(ledger)
        except OSError:
            return None
        if st.st_size < (MIN_BYTES if min_bytes is None else min_bytes):
            return None
        db = index_path(ledger)
        try:
            key = _seal_key()
            db.parent.mkdir(parents=True, exist_ok=True)
            lock_fd = os.open(str(db) + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            conn, meta = _fresh(ledger, db, key, rebuild)
        except BaseException:
            os.close(lock_fd)
            raise
        return cls(ledger, db, conn, lock_fd, meta)

    def close(self) -> None:
        """Release the connection, the ledger handle and the lock."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self.conn.close()
        os.close(self._lock_fd)

    def __enter__(self) -> LedgerIndex:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def discard(self) -> None:
        """Forget this index (its seal): the next query rebuilds it."""
        try:
            os.unlink(str(self.db) + ".seal")
        except OSError:
            pass

    # ---------------------------------------------------------------- reading served lines
    @property
    def offset(self) -> int:
        """Bytes of the ledger the index covers (complete lines)."""
        return int(self.meta["offset"])

    @property
    def lines(self) -> int:
        """Ledger lines the index covers."""
        return int(self.meta["lines"])

    def read(self, rows: list[tuple[int, int, int, bytes]]) -> Iterator[tuple[int, bytes]]:
        """``(line, raw bytes)`` of ``(line, off, len, sha)`` rows, each checked against its sha256."""
        if self._fh is None:
            self._fh = open(self.ledger, "rb", buffering=0)
        fd = self._fh.fileno()
        for n, off, ln, sha in rows:
            raw = os.pread(fd, ln, off)
            if hashlib.sha256(raw).digest() != sha:
                self.discard()
                raise IndexMismatch(f"ledger line {n} changed since it was indexed")
            yield n, raw

    def tail(self) -> Iterator[tuple[int, bytes]]:
        """Lines after :attr:`offset` (an incomplete last line, or lines appended since the refresh)."""
        with open(self.ledger, "rb", buffering=1 << 20) as f:
            f.seek(self.offset)
            for i, raw in enumerate(f, self.lines + 1):
                yield i, raw

    def odd_rows(self) -> list[tuple[int, int, int, bytes]]:
        """Rows the scan's own code must decide (see the module docstring)."""
        return self.conn.execute("SELECT line, off, len, sha FROM rec WHERE kind = 1 ORDER BY line").fetchall()


# -------------------------------------------------------------------------------------------- freshness, seal

def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _mac(key: bytes, ledger: Path, st: os.stat_result) -> str:
    msg = json.dumps([SCHEMA_VERSION, os.path.realpath(ledger), _stat_key(st)]).encode()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def _sealed(db: Path, key: bytes, ledger: Path) -> bool:
    try:
        seal = Path(str(db) + ".seal").read_text(encoding="ascii").strip()
        st = os.stat(db)
    except (OSError, UnicodeDecodeError):
        return False
    return hmac.compare_digest(seal, _mac(key, ledger, st))


def _seal(conn: sqlite3.Connection, db: Path, key: bytes, ledger: Path) -> None:
    conn.commit()
    tmp = Path(str(db) + ".seal.tmp")
    tmp.write_text(_mac(key, ledger, os.stat(db)) + "\n", encoding="ascii")
    os.replace(tmp, str(db) + ".seal")


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(db), isolation_level="DEFERRED")
    conn.execute("PRAGMA synchronous=OFF")  # a cache: a crash leaves a seal mismatch, i.e. a rebuild
    conn.execute("PRAGMA journal_mode=MEMORY")
    return conn


def _read_meta(conn: sqlite3.Connection) -> dict:
    return {k: v for k, v in conn.execute("SELECT k, v FROM meta")}


def _fresh(ledger: Path, db: Path, key: bytes, rebuild: bool) -> tuple[sqlite3.Connection, dict]:
    """Open the index at ``db`` for ``ledger``, up to date and sealed (building or extending it first)."""
    st = os.stat(ledger)
    conn = None
    if not rebuild and db.exists() and _sealed(db, key, ledger):
        try:
            conn = _connect(db)
            meta = _read_meta(conn)
            how = _how_fresh(ledger, st, meta)
        except (sqlite3.Error, KeyError, ValueError, OSError):
            how = "rebuild"
        if how == "fresh" and conn is not None:
            return conn, meta
        kept = _resync(conn, ledger, st, meta) if how == "resync" and conn is not None else 0
        if how == "extend" or kept:
            assert conn is not None
            if how == "extend":
                _extend(conn, ledger, st, meta)
            _seal(conn, db, key, ledger)
            fresh = _read_meta(conn)
            fresh["_resynced"] = kept if kept else None
            return conn, fresh
    if conn is not None:
        conn.close()
    return _rebuild(ledger, db, key)


def _how_fresh(ledger: Path, st: os.stat_result, meta: dict) -> str:
    """``fresh`` (nothing to do), ``extend`` (only appended) or ``rebuild`` (see the module docstring)."""
    if int(meta.get("version", -1)) != SCHEMA_VERSION or meta.get("ledger") != os.path.realpath(ledger):
        return "rebuild"
    if [st.st_dev, st.st_ino] != [int(meta["dev"]), int(meta["ino"])]:
        return "resync"  # replaced (checkout, merge, an editor's save): keep what is still the same
    if st.st_size == int(meta["size"]) and st.st_mtime_ns == int(meta["mtime_ns"]):
        return "fresh"
    if st.st_size <= int(meta["size"]) or st.st_size < int(meta["offset"]):
        return "resync"  # shrunk, or rewritten in place without growing
    last_len = int(meta["last_len"])
    if last_len:
        with open(ledger, "rb", buffering=0) as f:
            raw = os.pread(f.fileno(), last_len, int(meta["last_off"]))
        if hashlib.sha256(raw).hexdigest() != meta["last_sha"]:
            return "resync"
    return "extend"


def _resync(conn: sqlite3.Connection, ledger: Path, st: os.stat_result, meta: dict) -> int:
    """Keep the indexed lines that are still byte-identical at the start of the ledger (every line compared by
    length and sha256), drop the rows after the first difference and index the rest; returns how many lines were
    kept. 0 (rebuild instead) when not even the first line is the same."""
    same, off, last = 0, 0, (0, 0, "")
    cur = conn.execute("SELECT line, len, sha FROM rec ORDER BY line")
    with open(ledger, "rb", buffering=1 << 20) as f:
        for (line, ln, sha), raw in zip(cur, f):
            if len(raw) != ln or raw[-1:] != b"\n" or hashlib.sha256(raw).digest() != sha:
                break
            same, last, off = line, (off, ln, sha.hex()), off + ln
    cur.close()
    if same == 0:
        return 0
    for table in ("rec", "path", "ren"):
        conn.execute(f"DELETE FROM {table} WHERE line > ?", (same,))
    n, end, last = _index_range(conn, ledger, off, st.st_size, same, last)
    _write_meta(conn, ledger, st, n, end, last)
    return same


def _extend(conn: sqlite3.Connection, ledger: Path, st: os.stat_result, meta: dict) -> None:
    """Index the complete lines from the offset the index reached up to ``st``'s size; update the meta."""
    last = (int(meta["last_off"]), int(meta["last_len"]), str(meta["last_sha"]))
    n, off, last = _index_range(conn, ledger, int(meta["offset"]), st.st_size, int(meta["lines"]), last)
    _write_meta(conn, ledger, st, n, off, last)


def _write_meta(conn: sqlite3.Connection, ledger: Path, st: os.stat_result, n: int, off: int, last: tuple) -> None:
    values = {"offset": off, "lines": n, "last_off": last[0], "last_len": last[1], "last_sha": last[2],
              "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
              "ledger": os.path.realpath(ledger), "version": SCHEMA_VERSION}
    conn.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", list(values.items()))


def _index_range(conn: sqlite3.Connection, ledger: Path, off: int, end: int, n: int,
                 last: tuple) -> tuple[int, int, tuple]:
    """Insert the complete lines in bytes [off, end), numbered after line ``n``; returns (n, off, last line)."""
    recs: list[tuple] = []
    paths: list[tuple] = []
    rens: list[tuple] = []
    ins = _inserter(conn)
    with open(ledger, "rb", buffering=1 << 20) as f:
        f.seek(off)
        remaining = end - off
        for raw in f:
            if remaining < len(raw) or raw[-1:] != b"\n":
                break  # beyond the end, or an incomplete last line: left to the tail
            remaining -= len(raw)
            n += 1
            row, p, r = extract(n, off, raw)
            recs.append(row)
            paths.extend(p)
            rens.extend(r)
            last = (off, len(raw), row[3].hex())  # the row's sha256 of the raw line
            off += len(raw)
            if len(recs) >= 20000:
                ins(recs, paths, rens)
    ins(recs, paths, rens)
    return n, off, last


#: ledgers bigger than this are indexed from scratch by one worker process per CPU (at most 4)
PARALLEL_MIN_BYTES = 64 * 1024 * 1024


def _part(args: tuple[str, str, int, int]) -> tuple[int, int, tuple]:
    """Worker: index bytes [start, end) of the ledger into a database of its own (lines numbered from 1)."""
    ledger, out, start, end = args
    conn = sqlite3.connect(out, isolation_level="DEFERRED")
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_SCHEMA)
        res = _index_range(conn, Path(ledger), start, end, 0, (0, 0, ""))
        conn.commit()
    finally:
        conn.close()
    return res


def _build_parallel(conn: sqlite3.Connection, ledger: Path, st: os.stat_result, tmp: Path, workers: int) -> None:
    """Index the ledger in ``workers`` processes (byte ranges starting at line starts), then merge in order."""
    import concurrent.futures
    import multiprocessing

    from .verifier import _chunks
    bounds = _chunks(str(ledger), workers)
    parts = [(str(ledger), f"{tmp}.part{k}", a, st.st_size if b is None else b) for k, (a, b) in enumerate(bounds)]
    try:
        with concurrent.futures.ProcessPoolExecutor(len(parts), mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_part, parts))
        n, off, last = 0, 0, (0, 0, "")
        for (_, out, start, _end), (count, reached, part_last) in zip(parts, results):
            if count == 0:
                break
            conn.execute("ATTACH DATABASE ? AS part", (out,))
            cols = "line + ?, off, len, sha, kind" + ", id, ts, intent, session, tool, cls, oos, s_intent, s_cls, " \
                "s_tool, s_agent, nfiles, added, removed, mismatch"
            conn.execute(f"INSERT INTO rec SELECT {cols} FROM part.rec", (n,))
            conn.execute("INSERT INTO path SELECT line + ?, path FROM part.path", (n,))
            conn.execute("INSERT INTO ren SELECT line + ?, src, dst FROM part.ren", (n,))
            conn.commit()
            conn.execute("DETACH DATABASE part")
            n, off, last = n + count, reached, part_last
            if reached != _end:
                break  # an incomplete line before the end of this part: nothing after it is indexed
    finally:
        for p in parts:
            try:
                os.unlink(p[1])
            except FileNotFoundError:
                pass
    _write_meta(conn, ledger, st, n, off, last)


def _inserter(conn: sqlite3.Connection) -> Any:
    marks = ",".join("?" * _N_COLS)

    def ins(recs: list, paths: list, rens: list) -> None:
        conn.executemany(f"INSERT INTO rec VALUES ({marks})", recs)
        conn.executemany("INSERT INTO path VALUES (?, ?)", paths)
        conn.executemany("INSERT INTO ren VALUES (?, ?, ?)", rens)
        recs.clear()
        paths.clear()
        rens.clear()
    return ins


def _rebuild(ledger: Path, db: Path, key: bytes) -> tuple[sqlite3.Connection, dict]:
    """Build the whole index into a temporary file, then move it in place and seal it."""
    tmp = Path(str(db) + ".tmp")
    for p in (tmp, Path(str(db) + ".seal")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass
    conn = sqlite3.connect(str(tmp), isolation_level="DEFERRED")
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_SCHEMA)
        st = os.stat(ledger)
        workers = min(os.cpu_count() or 1, 4)
        if workers > 1 and st.st_size >= PARALLEL_MIN_BYTES:
            _build_parallel(conn, ledger, st, tmp, workers)
        else:
            _extend(conn, ledger, st, {"offset": 0, "lines": 0, "last_off": 0, "last_len": 0, "last_sha": ""})
        conn.executescript(_INDEXES)
        conn.commit()
    finally:
        conn.close()
    os.replace(tmp, db)
    conn = _connect(db)
    _seal(conn, db, key, ledger)
    meta = _read_meta(conn)
    meta["_rebuilt"] = True
    return conn, meta
