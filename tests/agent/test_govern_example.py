"""The "use it in your loop" example of docs/readme-usage.md, run as written (Governor.govern)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import Denied, Governor


def test_readme_govern_example(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws)
    # --- as in docs/readme-usage.md ---------------------------------------------------------
    gov = Governor(".")                                  # the repository holding .orchestration/
    gov.select_intent("INT-1", session_id="my-loop")     # the intent handshake (once per session)

    @gov.govern(session_id="my-loop")                    # pre-hooks -> run -> post-hooks, every call
    def write_file(path: str, content: str) -> str:
        Path(path).write_text(content)
        return f"wrote {path}"

    def run_tool(name: str, args: dict) -> dict:         # your loop's dispatcher
        try:
            return {"ok": True, "result": TOOLS[name](**args)}
        except Denied as refusal:                        # structured: type, hook, message, hint, details
            return {"ok": False, "error": refusal.to_dict()}
    # ------------------------------------------------------------------------------------------
    TOOLS = {"write_file": write_file}
    assert run_tool("write_file", {"path": "src/x.py", "content": "x = 1\n"}) == {"ok": True,
                                                                                   "result": "wrote src/x.py"}
    refused = run_tool("write_file", {"path": "README.md", "content": "no"})
    assert refused["ok"] is False and refused["error"]["type"] == "scope-violation"
    assert (ws / "README.md").read_text() == "# repo\n"
