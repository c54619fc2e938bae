"""Structural guard of the hot path: what a cold hook process imports (not a timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("textual", "watchdog", "git", "rich", "pydantic", "yaml", "pathspec", "mcp", "langchain",
         "cryptography",  # cryptography: the ledger signer, post-hook only (docs/ledger.md §4a)
         "starlette", "uvicorn", "webauthn", "cbor2", "OpenSSL")  # the web console; passkey checks (issue 29)

SCRIPT = """
import json, sys
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
gov = Governor(sys.argv[1], approval_channel="deny")
verdicts = [gov.pre(to_call(t, i, session_id="s")).decision for t, i in (
    ("Write", {"file_path": "src/new.py", "content": "x"}),
    ("Write", {"file_path": "docs/x.md", "content": "x"}),
    ("Write", {"file_path": ".env", "content": "x"}),
    ("Read", {"file_path": "src/app.py"}),
)]
print(json.dumps({"verdicts": verdicts, "modules": sorted(m for m in sys.modules if m.split(".")[0] in %r)}))
""" % (HEAVY,)


def run(ws: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ws)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout)


def test_cold_process_with_compiled_cache_imports_nothing_heavy(ws: Path) -> None:
    from orchestrator.engine.pipeline import Governor

    Governor(ws).select_intent("INT-001", "s")
    first = run(ws)  # may validate (yaml, pydantic, pathspec) and fill the compiled cache
    assert first["verdicts"] == ["allow", "deny", "deny", "allow"]
    second = run(ws)
    assert second["verdicts"] == first["verdicts"]
    assert second["modules"] == [], f"hot path imported {second['modules']}"


def test_cache_follows_edits(ws: Path) -> None:
    from orchestrator.engine.pipeline import Governor

    Governor(ws).select_intent("INT-001", "s")
    run(ws)
    (ws / ".orchestration" / ".intentignore").write_text("src/new.py\n")
    assert run(ws)["verdicts"][0] == "deny"


def test_a_governed_call_imports_no_ctypes(ws: Path) -> None:
    # freshness is proven with plain stat calls (docs/performance.md, "Live cache decision"): no ctypes binding
    script = ("import sys\nfrom orchestrator.engine.pipeline import Governor\nfrom orchestrator.engine.tools import to_call\n"
              "Governor(sys.argv[1]).pre(to_call('Write', {'file_path': 'src/x.py'}, session_id='s'))\n"
              "print(sorted(m for m in ('ctypes',) if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_pre_hook_captures_without_loading_the_record_half_of_the_trace(ws: Path) -> None:
    # an allowed Write captures its pre-image (post/preimage.py); writing the record (post/trace.py, and through it
    # the classifier) is the post-hook's work
    from orchestrator.engine.pipeline import Governor

    Governor(ws).select_intent("INT-001", "s")
    script = ("import sys\nfrom orchestrator.engine.pipeline import Governor\nfrom orchestrator.engine.tools import to_call\n"
              "v = Governor(sys.argv[1]).pre(to_call('Write', {'file_path': 'src/x.py', 'content': 'x'}, "
              "session_id='s'))\n"
              "print(v.decision, sorted(m for m in ('orchestrator.post.preimage', 'orchestrator.post.trace', "
              "'orchestrator.classify.mutation') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "allow ['orchestrator.post.preimage']"


def test_the_passkey_channel_loads_webauthn_only_to_check_an_assertion(ws: Path) -> None:
    """Channel passkey: an allowed write, and a call that waits for a person and gets no decision, import neither
    py_webauthn nor cryptography nor the console (the check's imports are measured in bench/bench_passkey.py)."""
    from orchestrator.engine.pipeline import Governor

    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\napproval:\n  channel: passkey\n")
    Governor(ws).select_intent("INT-001", "s")
    script = ("import sys, json\nfrom orchestrator.engine.pipeline import Governor\n"
              "from orchestrator.engine.tools import to_call\n"
              "gov = Governor(sys.argv[1])\n"
              "a = gov.pre(to_call('Write', {'file_path': 'src/x.py', 'content': 'x'}, session_id='s')).decision\n"
              "b = gov.pre(to_call('Bash', {'command': 'rm -rf src'}, session_id='s')).to_dict()\n"
              "print(json.dumps([a, b['error']['type'], sorted(m for m in sys.modules if m.split('.')[0] in %r)]))\n"
              % (HEAVY,))
    run(ws)  # fill the compiled cache (the validation imports yaml and pydantic once)
    out = subprocess.run([sys.executable, "-c", script, str(ws)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "ORCH_APPROVAL_TIMEOUT": "0.2"})
    allowed, refusal, modules = json.loads(out.stdout)
    assert (allowed, refusal) == ("allow", "approval-timeout")
    assert [m for m in modules if m.split(".")[0] != "watchdog"] == [], modules  # watchdog: the broker's wait
