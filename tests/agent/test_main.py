from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.agent.__main__ import main


def test_runs_a_script_on_a_workspace(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("""
turns:
  - tool_calls: [{name: select_active_intent, input: {intent_id: INT-1}}]
  - tool_calls: [{name: write_file, input: {path: src/b.py, content: "b = 2\\n"}}]
  - answer: written
""")
    assert main(["write b", "-C", str(ws), "--script", str(script)]) == 0
    assert (ws / "src" / "b.py").read_text() == "b = 2\n"
    assert "model: written" in capsys.readouterr().out


def test_without_a_model_it_says_how_to_get_one(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["x", "-C", str(ws)]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
