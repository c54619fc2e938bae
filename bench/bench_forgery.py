"""How many of the forgery cases of tests/ledger/test_signing.py ``verify`` reports, now and with only the checks
it had before issue 22 (hash chain + schema, duplicate JSON keys accepted, no signatures, no anchor). Prints the
counts and the cases the old checks missed; figures in docs/security.md.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_forgery.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_TMP = tempfile.mkdtemp(prefix="bench-forgery-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_TMP, "config")
os.environ["XDG_STATE_HOME"] = os.path.join(_TMP, "state")

from orchestrator import ledger  # noqa: E402
from orchestrator.ledger import verifier  # noqa: E402
from tests.ledger import test_signing as cases  # noqa: E402


def main() -> None:
    now = before = 0
    missed: list[str] = []
    for i, (forge, _expect) in enumerate(cases.FORGERIES):
        led = cases.Ledger(Path(_TMP) / f"r{i}" / "repo")
        forge(led)
        now += not led.verify().ok
        strict_loads = verifier.loads_record
        verifier.loads_record = json.loads  # the parser before: the last duplicated key wins
        try:
            old_ok = ledger.verify(led.path, signatures=False).ok
        finally:
            verifier.loads_record = strict_loads
        before += not old_ok
        if old_ok:
            missed.append(forge.__name__[2:])
    n = len(cases.FORGERIES)
    print(f"{n} forgery cases: reported now {now}/{n}; by the checks before issue 22 {before}/{n}")
    print("accepted before:", ", ".join(missed))


if __name__ == "__main__":
    main()
