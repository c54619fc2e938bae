"""diffing: ranges equal git's own diff (real git in a tmp repo) over seeded random edit sequences."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from orchestrator.core.diffing import Hunk, changed_ranges, diff_hunks, hash_lines, ranges_for_new_file, split_lines

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def git_hunks(repo: Path, old: str, new: str) -> list[Hunk]:
    f = repo / "f.txt"
    f.write_text(old, newline="")
    subprocess.run(["git", "add", "f.txt"], cwd=repo, check=True)
    f.write_text(new, newline="")
    out = subprocess.run(["git", "diff", "-U0", "--no-color", "--no-indent-heuristic", "--diff-algorithm=myers",
                          "f.txt"], cwd=repo, check=True, capture_output=True, text=True).stdout
    return [Hunk(int(a), int(b) if b != "" else 1, int(c), int(d) if d != "" else 1)
            for a, b, c, d in HUNK_RE.findall(out)]


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "core.autocrlf", "false"], cwd=tmp_path, check=True)
    return tmp_path


def _unique(rng: random.Random, counter: list[int]) -> str:
    counter[0] += 1
    return f"line {counter[0]} {rng.randrange(10**6)}\n"


def _edit(rng: random.Random, lines: list[str], counter: list[int]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["ins", "del", "rep", "app"])
        i = rng.randint(0, len(out))
        if op == "ins" or not out:
            out[i:i] = [_unique(rng, counter) for _ in range(rng.randint(1, 3))]
        elif op == "del":
            del out[min(i, len(out) - 1):min(i, len(out) - 1) + rng.randint(1, 3)]
        elif op == "rep":
            j = min(i, len(out) - 1)
            out[j:j + rng.randint(1, 3)] = [_unique(rng, counter) for _ in range(rng.randint(1, 3))]
        else:
            out.append(_unique(rng, counter))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_ranges_equal_git_diff_over_random_edit_sequences(repo: Path, seed: int) -> None:
    rng = random.Random(seed)
    counter = [0]
    lines = [_unique(rng, counter) for _ in range(rng.randint(0, 40))]
    for _step in range(8):
        new_lines = _edit(rng, lines, counter)
        old, new = "".join(lines), "".join(new_lines)
        ranges, hunks = changed_ranges(old, new)
        expected = git_hunks(repo, old, new)
        assert hunks == expected, (old, new)
        # ranges are exactly the new-side extents of git's hunks, hashed from the new file's lines
        exp_ranges = [(h.new_start, h.new_start + h.new_lines - 1) for h in expected if h.new_lines]
        assert [(r.start_line, r.end_line) for r in ranges] == exp_ranges
        nl = split_lines(new)
        for r in ranges:
            assert r.content_hash == hash_lines(nl[r.start_line - 1:r.end_line])
        lines = new_lines


def _apply(old: list[str], new: list[str], hunks: list[Hunk]) -> list[str]:
    out, pos = [], 0
    for h in hunks:
        start = h.old_start - 1 if h.old_lines else h.old_start
        out += old[pos:start]
        ns = h.new_start - 1 if h.new_lines else h.new_start
        out += new[ns:ns + h.new_lines]
        pos = start + h.old_lines
    return out + old[pos:]


@pytest.mark.parametrize("seed", range(30))
def test_hunks_always_reproduce_new_text_even_with_repeated_lines(seed: int) -> None:
    rng = random.Random(1000 + seed)
    pool = ["}\n", "\n", "x = 1\n", "return x\n", "pass\n"]
    old = [rng.choice(pool) for _ in range(rng.randint(0, 30))]
    new = list(old)
    for _ in range(rng.randint(1, 5)):
        i = rng.randint(0, len(new))
        if rng.random() < 0.5 and new:
            del new[min(i, len(new) - 1)]
        else:
            new.insert(i, rng.choice(pool))
    assert _apply(old, new, diff_hunks(old, new)) == new
    _, hunks = changed_ranges("".join(old), "".join(new))
    assert _apply(old, new, hunks) == new


def test_newline_at_eof_and_crlf_are_changes_like_git(repo: Path) -> None:
    for old, new in [("a\nb", "a\nb\n"), ("a\nb\n", "a\r\nb\n"), ("", "x\n"), ("x\n", ""), ("a\nX", "aX")]:
        assert changed_ranges(old, new)[1] == git_hunks(repo, old, new)


def test_hash_normalisation_ignores_line_endings_and_position() -> None:
    assert hash_lines(["a\n", "b\n"]) == hash_lines(["a\r\n", "b"]) == hash_lines(["a", "b"])
    assert hash_lines(["a", "b"]) != hash_lines(["a", "b", ""])
    import hashlib
    assert hash_lines(["a\n", "b\n"]) == "sha256:" + hashlib.sha256(b"a\nb").hexdigest()


def test_new_file_one_range_and_empty_file_none() -> None:
    (r,) = ranges_for_new_file("a\nb\nc")
    assert (r.start_line, r.end_line) == (1, 3)
    assert ranges_for_new_file("") == []


@pytest.mark.parametrize("seed", range(4))
def test_big_diffs_with_repeated_lines_reproduce_the_new_text(seed: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A changed middle over the difflib limit goes to git's histogram diff (difflib took ~2 s at 2,000 lines of a
    half re-indented file, quadratically more beyond): the hunks still rebuild the new text exactly, also without
    git (difflib with autojunk: coarser but correct), and the prefix/suffix offsets are applied."""

    from orchestrator.core import diffing

    rng = random.Random(seed)
    pool = ["}\n", "\n", "return x;\n", "i++;\n", "if (a) {\n", "});\n"]
    body = ["  " + rng.choice(pool) for _ in range(3000)]
    old = ["// head\n"] + body + ["// tail\n"]
    new = ["// head\n"] + [("    " + ln.lstrip(" ")) if rng.random() < 0.5 else ln for ln in body] + ["// tail\n"]
    for _ in range(40):  # insertions and deletions too (git numbering of zero-length sides)
        i = rng.randint(1, len(new) - 2)
        if rng.random() < 0.5:
            del new[i]
        else:
            new.insert(i, rng.choice(pool))
    hunks = diff_hunks(old, new)
    assert _apply(old, new, hunks) == new
    assert len(hunks) > 100  # line-level, not one whole-file hunk
    monkeypatch.setattr(diffing, "_git_hunks", lambda a, b: None)
    assert _apply(old, new, diff_hunks(old, new)) == new
