"""Changed line ranges of a new text against its pre-image, and their content hashes.

Pure functions, stdlib only (this module sits on the post-hook hot path).

Line model (same as git): a text is split on ``"\\n"`` only; every line keeps its terminator for *comparison*, so
``"a\\r\\n"`` differs from ``"a\\n"`` and a missing newline at end of file is a change of the last line, exactly like
``git diff``. Line numbers are 1-based.

Content hash normalisation (``content_hash``), documented in docs/ledger.md:
    ``"sha256:" + sha256( "\\n".join(lines) ).hexdigest()`` where each line has its terminator removed (``"\\n"``,
    then one trailing ``"\\r"``), the lines are joined with a single ``"\\n"`` and there is **no** trailing newline;
    the text is encoded as UTF-8 with ``surrogateescape`` (so undecodable bytes read with that handler round-trip).
So the hash depends only on the range's line contents, not on its position, the file's line-ending style (LF vs
CRLF) or on whether the file ends with a newline; that is what lets ``orch trace blame`` re-find a range after
other edits shifted it.

Diff algorithm: common prefix/suffix are trimmed first (an agent edit usually touches a few lines of a big file, so
this makes the common case O(n) string compares), then :class:`difflib.SequenceMatcher` (``autojunk=False``) on the
middle. For inputs whose lines are unambiguous (no repeated lines inside the changed middle) the hunks are identical
to ``git diff -U0``'s (tested against real git); with repeated lines two minimal diffs can legitimately differ in
where they place a hunk, and difflib is not guaranteed minimal, but the result is always a correct diff (applying it
reproduces the new text; tested). A changed middle of more than 250,000 line pairs (500 x 500) goes to
``git diff --no-index --histogram`` instead (difflib is near-quadratic on repeated lines: seconds at 2,000 lines);
without git, difflib with ``autojunk`` (coarser hunks, still correct).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "Hunk",
    "Range",
    "split_lines",
    "hash_lines",
    "line_hash",
    "diff_hunks",
    "changed_ranges",
    "ranges_from_hunks",
    "ranges_for_new_file",
    "is_binary",
    "decode",
]

EMPTY_SHA = hashlib.sha256(b"").hexdigest()


# named tuples, not dataclasses: this module is on the pre-hook's import path (capture), where each
# @dataclass costs ~1 ms to generate
class Hunk(NamedTuple):
    """One change, git style: ``old_lines`` lines at ``old_start`` became ``new_lines`` lines at ``new_start``.

    As in ``git diff -U0``, when a side has zero lines its start is the line *before* the change (0 at the top).
    """

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


class Range(NamedTuple):
    """An inclusive 1-based line range of the new text, with the content hash of its lines."""

    start_line: int
    end_line: int
    content_hash: str

    def to_dict(self) -> dict:
        """Agent Trace ``range`` object."""
        return {"start_line": self.start_line, "end_line": self.end_line, "content_hash": self.content_hash}


def decode(data: bytes) -> str:
    """Decode file bytes as UTF-8, keeping undecodable bytes via ``surrogateescape`` (lossless round trip)."""
    return data.decode("utf-8", "surrogateescape")


def is_binary(data: bytes) -> bool:
    """Heuristic used by git too: a NUL byte in the first 8000 bytes means binary."""
    return b"\x00" in data[:8000]


def split_lines(text: str) -> list[str]:
    """Split on ``"\\n"`` only, keeping terminators; a final line without newline is kept as is."""
    if not text:
        return []
    parts = text.split("\n")
    last = parts.pop()
    lines = [p + "\n" for p in parts]
    if last:
        lines.append(last)
    return lines


def _strip_eol(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def hash_lines(lines: list[str]) -> str:
    """Content hash of a list of lines (with or without terminators); see the module docstring."""
    body = "\n".join([_strip_eol(x) for x in lines])
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()


def line_hash(line: str) -> str:
    """Short per-line hash for blame/audit metadata: the first 10 hex digits (40 bits) of the sha256 of the line
    without its terminator (same normalisation as :func:`hash_lines`, so LF/CRLF do not matter). A hash, not
    content: it only lets a reader that *has* the line recognise it."""
    return hashlib.sha256(_strip_eol(line).encode("utf-8", "surrogateescape")).hexdigest()[:10]


def diff_hunks(old: list[str], new: list[str]) -> list[Hunk]:
    """Hunks turning ``old`` into ``new`` (lists from :func:`split_lines`), in order, git ``-U0`` numbering."""
    n_old, n_new = len(old), len(new)
    # Trim the common prefix and suffix: cheap and keeps SequenceMatcher's quadratic parts off big unchanged files.
    pre = 0
    lim = min(n_old, n_new)
    while pre < lim and old[pre] == new[pre]:
        pre += 1
    suf = 0
    lim -= pre
    while suf < lim and old[n_old - 1 - suf] == new[n_new - 1 - suf]:
        suf += 1
    a = old[pre:n_old - suf]
    b = new[pre:n_new - suf]
    if not a and not b:
        return []
    if not a or not b:
        opcodes: Sequence[tuple[str, int, int, int, int]] = [("replace", 0, len(a), 0, len(b))]
    elif len(a) * len(b) > _BIG:
        # difflib is near-quadratic per popular line: a 2,000-line reformat with repeated lines takes seconds, a
        # 4,000-line one a minute (a post-hook that long loses its record). git's histogram diff takes milliseconds.
        big = _git_hunks(a, b)
        if big is not None:
            return [Hunk(pre + os_, ol, pre + ns_, nl) for os_, ol, ns_, nl in big]
        from difflib import SequenceMatcher
        # no git: popular lines may not anchor a match (coarser hunks, still a correct diff) rather than no record
        opcodes = SequenceMatcher(None, a, b, autojunk=True).get_opcodes()
    else:
        from difflib import SequenceMatcher  # lazy: not needed on the pre-hook path
        opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        ol, nl = i2 - i1, j2 - j1
        # git numbering: a zero-length side points at the line before the change.
        os_ = pre + i1 + (1 if ol else 0)
        ns_ = pre + j1 + (1 if nl else 0)
        # get_opcodes() always separates two changes by an 'equal' block, so hunks never need merging.
        hunks.append(Hunk(os_, ol, ns_, nl))
    return hunks


#: above this many line pairs (changed middle old x new) the diff goes to git (~10 ms a spawn); below, difflib
#: takes < 0.07 s even on repeated lines
_BIG = 250_000


def _git_hunks(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]] | None:
    """``git diff --no-index --histogram -U0`` of two line lists, as ``(old_start, old_lines, new_start, new_lines)``
    in git numbering; None when git is missing or fails. The user's git configuration is ignored (no global or
    system config, no external diff or textconv), so their settings cannot change the hunks."""
    import os
    import re
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="orch-diff-") as tmp:
        paths = []
        for name, lines in (("a", a), ("b", b)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as fh:
                fh.write("".join(lines).encode("utf-8", "surrogateescape"))
            paths.append(path)
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
        try:
            proc = subprocess.run(
                ["git", "diff", "--no-index", "--histogram", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                 "--text", *paths], capture_output=True, env=env, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
    if proc.returncode not in (0, 1):
        return None
    out: list[tuple[int, int, int, int]] = []
    for m in re.finditer(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", proc.stdout, re.MULTILINE):
        os_, ol, ns_, nl = m.groups()
        out.append((int(os_), 1 if ol is None else int(ol), int(ns_), 1 if nl is None else int(nl)))
    return out


def ranges_from_hunks(new: list[str], hunks: list[Hunk]) -> list[Range]:
    """The new-side line ranges of ``hunks`` (pure deletions have none), each with its content hash."""
    out: list[Range] = []
    for h in hunks:
        if h.new_lines:
            s = h.new_start
            e = s + h.new_lines - 1
            out.append(Range(s, e, hash_lines(new[s - 1:e])))
    return out


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by bisection on slice equality (C-speed compares, O(n log n) bytes)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo], a[:hi+1] != b[:hi+1] region
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def changed_ranges(old_text: str | None, new_text: str | None) -> tuple[list[Range], list[Hunk]]:
    """Changed ranges of ``new_text`` vs ``old_text`` (``None`` = file absent) and the hunks they came from.

    Fast path for big files: the common leading and trailing *lines* are found on the raw strings (C-speed
    compares), so only the changed middle is split into lines and diffed.
    """
    old = old_text or ""
    new = new_text or ""
    if old == new:
        return [], []
    p = _common_prefix(old, new)
    p = old.rfind("\n", 0, p) + 1  # back to a line start: only whole lines are common
    q = _common_prefix(old[p:][::-1], new[p:][::-1]) if min(len(old), len(new)) - p > 0 else 0
    # q chars at the end are common; keep whole lines only: the cut must be at a line start on *both* sides.
    o_end, n_end = len(old) - q, len(new) - q
    while o_end < len(old) and not ((o_end == 0 or old[o_end - 1] == "\n")
                                    and (n_end == 0 or new[n_end - 1] == "\n")):
        o_end += 1
        n_end += 1
    pre_lines = old.count("\n", 0, p)
    a = split_lines(old[p:o_end])
    b = split_lines(new[p:n_end])
    local = diff_hunks(a, b)
    hunks = [Hunk(h.old_start + pre_lines, h.old_lines, h.new_start + pre_lines, h.new_lines) for h in local]
    ranges = [Range(r.start_line + pre_lines, r.end_line + pre_lines, r.content_hash)
              for r in ranges_from_hunks(b, local)]
    return ranges, hunks


def ranges_for_new_file(new_text: str) -> list[Range]:
    """A created file: one range covering all its lines (none for an empty file)."""
    new = split_lines(new_text)
    if not new:
        return []
    return [Range(1, len(new), hash_lines(new))]
