"""`orch trace audit` on the scenario suite of tests/ledger/test_audit.py, as figures: how many ungoverned scenarios are
reported exactly, how many governed ones are (wrongly) flagged, and what one audit costs.

Each scenario gets a fresh git repository with the hostile user configuration of the tests (diff.noprefix,
mnemonicPrefix, color.ui=always, diff.external, core.autocrlf, quotepath) and odd file names.

    .venv/bin/python bench/bench_audit.py
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _suite():
    spec = importlib.util.spec_from_file_location("scenarios", ROOT / "tests" / "ledger" / "test_audit.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Patch:
    """Just enough of pytest's MonkeyPatch for the fixture (environment variables)."""

    def __init__(self) -> None:
        self.saved: dict[str, str | None] = {}

    def setenv(self, k: str, v: str) -> None:
        self.saved.setdefault(k, os.environ.get(k))
        os.environ[k] = v

    def undo(self) -> None:
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main() -> int:
    m = _suite()
    fixture = m.repo.__wrapped__ if hasattr(m.repo, "__wrapped__") else m.repo.__pytest_wrapped__.obj
    reported = flagged = 0
    times: list[float] = []
    misses: list[str] = []
    for kind, cases in (("ungoverned", m.UNGOVERNED), ("governed", [(n, a, None) for n, a in m.GOVERNED])):
        for name, act, expected in cases:
            with tempfile.TemporaryDirectory() as d:
                patch = _Patch()
                try:
                    r = fixture(Path(d), patch)
                    act(r)
                    t0 = time.perf_counter()
                    got = {f["path"]: f for f in r.audit()}
                    times.append(time.perf_counter() - t0)
                finally:
                    patch.undo()
            if kind == "ungoverned":
                ok = set(got) == set(expected) and all(
                    got[p]["kind"] == k and (rg is None or got[p]["ranges"] == rg)
                    and (rm is None or got[p].get("removed") == rm) for p, (k, rg, rm) in expected.items())
                reported += ok
                if not ok:
                    misses.append(f"ungoverned {name}: {got}")
            else:
                flagged += bool(got)
                if got:
                    misses.append(f"governed {name}: {got}")
    times.sort()
    print(f"ungoverned scenarios reported exactly: {reported}/{len(m.UNGOVERNED)}")
    print(f"governed scenarios flagged:            {flagged}/{len(m.GOVERNED)}")
    print(f"one audit: median {1000 * times[len(times) // 2]:.1f} ms, max {1000 * times[-1]:.1f} ms "
          f"(git plumbing: 4 processes)")
    for x in misses:
        print("  " + x)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
