"""`orch trace` verbs against real ledgers written by the real post-hook in a real git repository."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS

import jsonschema
import pytest

from orchestrator import ledger
from orchestrator.commands import trace as cmd
from orchestrator.post import trace

SCHEMA = json.loads(ledger.schema_path().read_text())


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


class WS:
    """A workspace with a real git repo, a ledger, and a helper performing governed edits."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".orchestration").mkdir()
        (root / ".gitignore").write_text(".orchestration/run/\n")
        self.gov = NS(workspace=NS(root=root, ledger_file=root / ".orchestration" / "agent_trace.jsonl",
                                   run_dir=root / ".orchestration" / "run"), settings={"ledger_fsync": False})
        self.n = 0

    def edit(self, path: str, text: str, *, intent: str = "INT-1", tool: str = "Edit",
             session: str = "s1") -> dict | None:
        self.n += 1
        call = NS(tool=tool, kind="edit", resolved=[path], shell=None, cwd=str(self.root),
                  tool_use_id=f"toolu_{self.n}", session_id=session, agent="claude-code", agent_id=None,
                  intent_id=intent, mutation_class=None, model_id=None)
        trace.capture(self.gov, call)
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).write_text(text)
        return trace.record(self.gov, call)

    @property
    def ledger(self) -> Path:
        return self.gov.workspace.ledger_file


def make_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WS:
    """A committed git repository with one file, the cwd, and the :class:`WS` helper."""
    git(tmp_path, "init", "-q")
    w = WS(tmp_path)
    (tmp_path / "base.py").write_text("def base():\n    return 0\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    monkeypatch.chdir(tmp_path)
    return w


@pytest.fixture()
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WS:
    return make_ws(tmp_path, monkeypatch)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cmd.main(["trace", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_list_filters_and_json_outputs(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    ws.edit("src/a.py", "def a():\n    return 1\n", intent="INT-A")
    ws.edit("src/b.py", "def b():\n    return 2\n", intent="INT-B", tool="Write", session="s2")
    ws.edit("src/a.py", "def a():\n    # comment\n    return 1\n", intent="INT-A")  # a refactor
    rc, out, _ = run(capsys, "--intent", "INT-A", "--jsonl")
    recs = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and len(recs) == 2 and {r["metadata"][ledger.NS]["intent_id"] for r in recs} == {"INT-A"}
    rc, out, _ = run(capsys, "list", "--class", "refactor", "--json")
    (only,) = json.loads(out)
    assert only["metadata"][ledger.NS]["mutation_class"] == "AST_REFACTOR"
    assert len(json.loads(run(capsys, "--session", "s2", "--json")[1])) == 1
    assert len(json.loads(run(capsys, "--tool", "write", "--json")[1])) == 1
    assert len(json.loads(run(capsys, "--file", "src/b.py", "--json")[1])) == 1
    assert len(json.loads(run(capsys, "--file", "src", "--json")[1])) == 3
    assert len(json.loads(run(capsys, "--file", "src/*.py", "--json")[1])) == 3
    assert len(json.loads(run(capsys, "--since", "1h", "--json")[1])) == 3
    assert len(json.loads(run(capsys, "--since", "2999-01-01", "--json")[1])) == 0
    assert len(json.loads(run(capsys, "--json", "--limit", "1")[1])) == 1
    rc, out, _ = run(capsys)  # the table
    assert rc == 0 and "3 of 3" in out and "INT-B" in out
    rc, _, err = run(capsys, "--class", "bogus")
    assert rc == 1 and "--class" in err


def test_show_by_prefix_and_line(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    rec = ws.edit("a.py", "x = 1\n")
    rc, out, _ = run(capsys, "show", rec["id"][:8], "--json")
    assert rc == 0 and json.loads(out)["id"] == rec["id"]
    rc, out, _ = run(capsys, "show", "L1", "--json")
    assert json.loads(out)["id"] == rec["id"]
    assert run(capsys, "show", "ffffffff")[0] == 1


def test_verify_and_repair_exit_codes(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(3):
        ws.edit("a.py", f"x = {i}\n")
    rc, out, _ = run(capsys, "verify")
    assert rc == 0 and out.startswith("ok: 3 record(s)")
    good = ws.ledger.read_bytes()
    with open(ws.ledger, "ab") as f:
        f.write(b'{"version":"0.1.')
    rc, _, err = run(capsys, "verify")
    assert rc == 1 and "agent_trace.jsonl:4:" in err and "torn" in err
    rc, out, _ = run(capsys, "repair")
    assert rc == 0 and "quarantine" in out
    assert ws.ledger.read_bytes() == good
    raw = good.splitlines(keepends=True)
    ws.ledger.write_bytes(raw[0] + raw[2] + raw[1])
    rc, out, err = run(capsys, "verify", "--json")
    assert rc == 1 and json.loads(out)["bad_line"] == 2
    assert run(capsys, "verify", "--strict")[0] == 1


def test_blame_relocates_ranges_after_shifting_edits(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    body = [f"def f{i}():\n    return {i}\n\n" for i in range(10)]
    ws.edit("m.py", "".join(body), intent="CREATE")
    body[4] = "def f4():\n    return 'four'\n\n"
    ws.edit("m.py", "".join(body), intent="CHANGE-F4")
    # Shift everything down with an ungoverned edit (a human adding a header), then a governed edit below.
    text = "# header line 1\n# header line 2\n" + "".join(body)
    (ws.root / "m.py").write_text(text)
    ws.edit("m.py", text.replace("return 8", "return 88"), intent="CHANGE-F8")
    rc, out, _ = run(capsys, "blame", "m.py", "--json")
    res = json.loads(out)
    owner = {}
    for r in res["runs"]:
        for i in range(r["start_line"], r["end_line"] + 1):
            owner[i] = r["record"] and r["record"]["intent_id"]
    lines = (ws.root / "m.py").read_text().splitlines()
    f4 = lines.index("    return 'four'") + 1
    f8 = lines.index("    return 88") + 1
    assert owner[1] is None and owner[2] is None  # the ungoverned header
    assert owner[f4] == "CHANGE-F4"  # recorded at line 14, now at 16: re-found by content hash
    assert owner[f8] == "CHANGE-F8"
    # the def line was in CREATE's whole-file range, whose content changed since: its own line hash re-finds it
    assert owner[f4 - 1] == "CREATE"
    rc, out, _ = run(capsys, "blame", f"m.py:{f4}")
    assert rc == 0 and "CHANGE-F4" in out and "recorded at" in out


@pytest.mark.parametrize("seed", range(3))
def test_blame_random_insertions_keep_attribution(ws: WS, capsys: pytest.CaptureFixture[str], seed: int) -> None:
    rng = random.Random(seed)
    lines = [f"base {i}\n" for i in range(30)]
    ws.edit("t.txt", "".join(lines), intent="BASE")
    marks = []
    for k in range(5):  # governed edits
        i = rng.randrange(len(lines))
        lines[i:i + 1] = [f"governed {k} a\n", f"governed {k} b\n"]
        ws.edit("t.txt", "".join(lines), intent=f"G{k}")
        marks.append(k)
    for _ in range(6):  # ungoverned insertions shifting everything
        lines.insert(rng.randrange(len(lines) + 1), f"human {rng.random()}\n")
    (ws.root / "t.txt").write_text("".join(lines))
    res = json.loads(run(capsys, "blame", "t.txt", "--json")[1])
    owner = {}
    for r in res["runs"]:
        for i in range(r["start_line"], r["end_line"] + 1):
            owner[i] = r["record"] and r["record"]["intent_id"]
    for n, line in enumerate(lines, 1):
        if line.startswith("governed"):
            k = int(line.split()[1])
            # both lines of the pair are still adjacent unless a later governed edit replaced one of them
            if owner[n] is not None:
                assert owner[n] == f"G{k}"
        if line.startswith("human"):
            assert owner[n] is None
    found = {owner[n] for n, line in enumerate(lines, 1) if line.startswith("governed")}
    assert found - {None}


def test_export_validates_and_strips_chain(ws: WS, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ws.edit("a.py", "x = 1\n")
    ws.edit("b.py", "y = 2\n", intent="INT-2")
    rc, out, _ = run(capsys, "export", "--format", "agent-trace")
    recs = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and len(recs) == 2
    for r in recs:
        jsonschema.validate(r, SCHEMA)
        assert "chain" not in r["metadata"][ledger.NS] and "sig" not in r["metadata"][ledger.NS]
    outf = tmp_path / "export.jsonl"
    run(capsys, "export", "--pure", "--intent", "INT-2", "-o", str(outf))
    (r,) = [json.loads(x) for x in outf.read_text().splitlines()]
    jsonschema.validate(r, SCHEMA)
    assert "metadata" not in r and r["files"][0]["path"] == "b.py"


def test_stats_per_intent_and_class(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    ws.edit("a.py", "def a():\n    return 1\n", intent="I1")
    ws.edit("a.py", "def a():\n    return 1  # note\n", intent="I1")
    ws.edit("b.py", "z = 1\n", intent="I2")
    st = json.loads(run(capsys, "stats", "--json")[1])
    assert st["records"] == 3
    assert st["per_intent"]["I1"]["AST_REFACTOR"] == 1 and st["per_intent"]["I1"]["INTENT_EVOLUTION"] == 1
    assert st["per_intent"]["I2"]["records"] == 1
    assert run(capsys, "stats")[0] == 0


def test_audit_finds_ungoverned_changes_only(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    ws.edit("gov.py", "def g():\n    return 1\n")  # governed new file
    ws.edit("base.py", "def base():\n    return 42\n")  # governed modification of a tracked file
    rc, out, _ = run(capsys, "audit")
    assert rc == 0 and out.startswith("ok")
    (ws.root / "base.py").write_text("def base():\n    return 42\n\nSNEAKY = True\n")  # ungoverned edit
    (ws.root / "rogue.txt").write_text("not governed\n")
    rc, out, _ = run(capsys, "audit", "--json")
    res = json.loads(out)
    found = {f["path"]: f for f in res["ungoverned"]}
    assert rc == 1 and set(found) == {"base.py", "rogue.txt"}
    assert found["base.py"]["ranges"] == [[3, 4]]
    (ws.root / "rogue.txt").unlink()
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "c2")
    (ws.root / "base.py").unlink()  # ungoverned deletion
    res = json.loads(run(capsys, "audit", "--json")[1])
    assert [(f["path"], f["kind"]) for f in res["ungoverned"]] == [("base.py", "deleted")]


def test_no_workspace_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "verify")
    assert rc == 1 and ".orchestration" in err


def test_register_does_not_clobber_global_options(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    """The main CLI may have global --json/--root options: trace's parsers must not overwrite them."""
    import argparse
    ws.edit("a.py", "x = 1\n")
    parser = argparse.ArgumentParser(prog="orch")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--root")
    sub = parser.add_subparsers(dest="command")
    cmd.register(sub)
    args = parser.parse_args(["--json", "--root", str(ws.root), "trace", "verify"])
    assert args.json is True and args.root == str(ws.root)
    assert cmd.run(args) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    args = parser.parse_args(["trace", "--intent", "INT-1", "list", "--jsonl"])
    assert args.intent == "INT-1" and args.jsonl
    assert cmd.run(args) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_register_on_the_subcommand_parser_like_cli_py(ws: WS, capsys: pytest.CaptureFixture[str],
                                                       tmp_path_factory: pytest.TempPathFactory,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """orchestrator/cli.py creates the `trace` parser itself and passes it to register(); -C picks the workspace."""
    import argparse
    ws.edit("a.py", "x = 1\n")
    parser = argparse.ArgumentParser(prog="orch")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("trace")
    cmd.register(p)
    p.set_defaults(_run=cmd.run)
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    args = parser.parse_args(["trace", "-C", str(ws.root), "verify", "--json"])
    assert args._run(args) == 0 and json.loads(capsys.readouterr().out)["records"] == 1
    args = parser.parse_args(["trace", "stats", "-C", str(ws.root), "--json"])
    assert args._run(args) == 0 and json.loads(capsys.readouterr().out)["records"] == 1


def test_blame_tracks_lines_through_governed_edits_exactly(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    """An edit inside an earlier range keeps the rest of that range attributed to the earlier record."""
    body = [f"def f{i}():\n    return {i}\n\n" for i in range(6)]
    ws.edit("m.py", "".join(body), intent="CREATE")
    body[2] = "def f2():\n    return 'two'\n\n"
    ws.edit("m.py", "".join(body), intent="EDIT-F2")
    body.insert(0, "import os\n\n")
    ws.edit("m.py", "".join(body), intent="ADD-IMPORT")
    res = json.loads(run(capsys, "blame", "m.py", "--json")[1])
    assert res["tracked"] is True
    owner = {}
    for r in res["runs"]:
        for i in range(r["start_line"], r["end_line"] + 1):
            owner[i] = r["record"]["intent_id"]
    lines = (ws.root / "m.py").read_text().splitlines()
    assert owner[1] == "ADD-IMPORT" and owner[2] == "ADD-IMPORT"
    assert owner[lines.index("    return 'two'") + 1] == "EDIT-F2"
    assert owner[lines.index("def f2():") + 1] == "CREATE"  # untouched line inside the old whole-file range
    assert owner[len(lines)] == "CREATE"
    # and nothing is reported as ungoverned
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "baseline")
    body[4] = "def f3():\n    return 333\n\n"
    ws.edit("m.py", "".join(body), intent="EDIT-F3")
    rc, out, _ = run(capsys, "audit")
    assert rc == 0, out


def test_session_prefix_and_80_columns(ws: WS, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ws.edit("src/a.py", "def a():\n    return 1\n", session="1a2b3c4d-5e6f-4711-8000-000000000001")
    ws.edit("src/b.py", "def b():\n    return 2\n", session="9f9f9f9f-0000-4000-8000-000000000002")
    assert len(json.loads(run(capsys, "--session", "1a2b", "--json")[1])) == 1
    assert len(json.loads(run(capsys, "--session", "1a2b3c4d-5e6f-4711-8000-000000000001", "--json")[1])) == 1
    assert json.loads(run(capsys, "--session", "2b3c", "--json")[1]) == []  # a prefix, not a substring
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, _ = run(capsys, "list")
    lines = out.splitlines()
    assert rc == 0 and all(len(line) <= 80 for line in lines), out
    assert any("src/a.py:1-2" in line for line in lines) and any("session 1a2b3c4d…" in line for line in lines)
    monkeypatch.setenv("COLUMNS", "200")
    assert "┃" in run(capsys, "list")[1] or "│" in run(capsys, "list")[1]  # wide enough: the table


def test_audit_ignores_what_orchestrator_writes(ws: WS, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator.adapters import installer
    from orchestrator.config.workspace import init

    init(ws.root)  # .gitattributes, .orchestration/*
    installer.install("claude-code", ws.root)  # .claude/settings.json, .mcp.json, .orchestration/bin/orch-hook
    (ws.root / "AGENTS.md").write_text("# lessons\n")
    rc, out, _ = run(capsys, "audit")
    assert rc == 0 and out.startswith("ok"), out
