"""The entry point (orchestrator/shell/api.py): never raises, frozen cached results, thread safety, import cost,
fuzzing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator.shell import ShellAnalysis, analyze


def test_never_raises_on_odd_input() -> None:
    for cmd in ("", " ", "\x00", "\\", "'", "\"", "$(", "`", "<<", ">", "|", "&&", ";;", "\udcff", "a" * 200_000,
                None, 12):  # type: ignore[list-item]
        res = analyze(cmd)  # type: ignore[arg-type]
        assert isinstance(res, ShellAnalysis)
    assert analyze("").kind == "unknown"  # fail closed: the adapter may have lost the real command
    assert analyze("   \n").kind == "unknown"
    assert analyze("a" * 200_000).kind == "unknown"
    assert analyze(None).kind == "unknown"  # type: ignore[arg-type]


def test_result_is_frozen_and_cached() -> None:
    a = analyze("rm -rf build")
    b = analyze("rm -rf build")
    assert a is b
    with pytest.raises(Exception):
        a.kind = "read_only"  # type: ignore[misc]
    assert a.deletes == ("build",)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_arbitrary_unicode(cmd: str) -> None:
    res = analyze(cmd)
    assert isinstance(res, ShellAnalysis)
    assert isinstance(res.writes, tuple) and isinstance(res.reasons, tuple)


def test_import_is_light() -> None:
    code = ("import sys; import orchestrator.shell; "
            "print(all(m not in sys.modules for m in ('tree_sitter', 'tree_sitter_bash', 'typing_extensions')))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.stdout.strip() == "True", out.stderr


def test_concurrent_use_from_threads() -> None:
    import threading

    from orchestrator.shell import api as shell

    cmds = [f"rm -rf dir{i} && ls" for i in range(200)] + [f"cat f{i} | grep x" for i in range(200)]
    errors: list[str] = []

    def work(chunk: list[str]) -> None:
        for c in chunk:
            shell._analyze_cached.cache_clear()
            res = analyze(c)
            want = "mutating" if c.startswith("rm") else "read_only"
            if res.kind != want:
                errors.append(f"{c}: {res}")

    threads = [threading.Thread(target=work, args=(cmds[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
