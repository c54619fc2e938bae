"""No test sleeps for a fixed time and then assumes something happened (or did not).

CI runs on a loaded 2-core machine: a sleep that is long enough here is too short there, and a sleep used as proof
that "nothing happened meanwhile" proves nothing. Tests wait for a condition with :func:`tests.waiting.wait_until`
(or ``until`` under Textual's Pilot) instead. This guard reads every test file's syntax tree and fails on a fixed
delay outside the allowlist below: ``time.sleep`` (also imported as ``sleep``), ``asyncio.sleep`` with a non-zero
delay, Pilot's ``pause(<delay>)`` and ``threading.Timer``.
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: test files allowed a fixed delay, each with its reason
ALLOWED = {
    # the one polling helper: it sleeps between two checks of a condition, never instead of one
    "waiting.py": "the shared wait_until/until helpers",
    # a fake Responses API answering the real Codex CLI: between two of Codex's searches for the orchestrator's MCP
    # tools it paces the retries (Codex starts MCP servers in the background); nothing is asserted on the delay
    "e2e/test_codex_cli.py": "a fake server pacing the real Codex CLI's retries",
}


def _delays(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each fixed delay in ``tree``."""
    found = []
    sleep_names = {"sleep"} if any(
        isinstance(n, ast.ImportFrom) and n.module == "time" and any(a.name == "sleep" for a in n.names)
        for n in ast.walk(tree)) else set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and (func.id in sleep_names or func.id == "Timer"):
            found.append((node.lineno, f"{func.id}(...)"))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if (owner, func.attr) in (("time", "sleep"), ("threading", "Timer")):
                found.append((node.lineno, f"{owner}.{func.attr}(...)"))
            elif (owner, func.attr) == ("asyncio", "sleep") and not _zero(node):
                found.append((node.lineno, "asyncio.sleep(<delay>)"))
            elif func.attr == "pause" and (node.args or node.keywords) and not _none(node):
                found.append((node.lineno, "pilot.pause(<delay>)"))
    return found


def _zero(call: ast.Call) -> bool:
    args = [*call.args, *(k.value for k in call.keywords)]
    return bool(args) and isinstance(args[0], ast.Constant) and args[0].value == 0


def _none(call: ast.Call) -> bool:
    args = [*call.args, *(k.value for k in call.keywords)]
    return isinstance(args[0], ast.Constant) and args[0].value is None


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def test_no_fixed_delays_in_tests() -> None:
    offenders = []
    for path in _test_files():
        rel = path.relative_to(TESTS).as_posix()
        if rel in ALLOWED:
            continue
        for line, what in _delays(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            offenders.append(f"tests/{rel}:{line}: {what}")
    assert offenders == [], ("fixed delays in tests; wait for a condition with tests.waiting.wait_until instead:\n"
                             + "\n".join(offenders))


def test_the_guard_sees_every_form_and_the_allowlist_is_current() -> None:
    sample = ast.parse(
        "import time, asyncio, threading\nfrom time import sleep\n"
        "time.sleep(1)\nsleep(1)\nthreading.Timer(1, f)\nasyncio.sleep(0.1)\nasyncio.sleep(0)\n"
        "pilot.pause(0.2)\npilot.pause()\npilot.pause(None)\n")
    assert [line for line, _ in _delays(sample)] == [3, 4, 5, 6, 8]
    # an allowlisted file that no longer delays, or no longer exists, must leave the list
    for rel in ALLOWED:
        path = TESTS / rel
        assert path.exists() and _delays(ast.parse(path.read_text(encoding="utf-8"))), (
            f"tests/{rel} no longer has a fixed delay (or is gone): remove it from ALLOWED in {Path(__file__).name}")
