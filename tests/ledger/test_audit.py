"""audit: a scenario suite in real git repositories with a hostile user git config.

Every ungoverned scenario must be reported (with the exact lines where there are lines), every governed one must
give no finding. Governed edits go through the real post-hook (capture -> change -> record), shell ones with the
real command run by a real shell.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS
from typing import Callable

import pytest

from orchestrator import ledger
from orchestrator.ledger.audit import audit, audited
from orchestrator.post import trace

# Settings users really have that broke the patch-parsing audit (and an external diff that would fail).
HOSTILE = """[diff]
\tnoprefix = true
\tmnemonicPrefix = true
\texternal = false
\trenames = copies
[color]
\tui = always
[core]
\tautocrlf = true
\tquotepath = true
[status]
\tshowUntrackedFiles = no
"""

ODD = ["name with space.txt", 'quote"s.txt', "back\\slash.txt", "tab\there.txt", "new\nline.txt", "ünïcode ✓.txt"]
APP = "".join(f"line {i}\n" for i in range(1, 21))
BIN = bytes(range(256)) * 4


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.gov = NS(workspace=NS(root=root, ledger_file=root / ".orchestration" / "agent_trace.jsonl",
                                   run_dir=root / ".orchestration" / "run"), settings={"ledger_fsync": False})
        self.n = 0

    def p(self, rel: str) -> Path:
        return self.root / rel

    def _call(self, **kw: object) -> NS:
        self.n += 1
        base = dict(tool="Edit", kind="edit", resolved=None, shell=None, cwd=str(self.root),
                    tool_use_id=f"toolu_{self.n}", session_id="s", agent="claude-code", agent_id=None,
                    intent_id="INT-1", mutation_class=None, model_id=None)
        base.update(kw)
        return NS(**base)

    def write(self, rel: str, data: str | bytes) -> None:
        """A governed Edit/Write of one file."""
        call = self._call(resolved=[rel])
        trace.capture(self.gov, call)
        self.p(rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            self.p(rel).write_bytes(data)
        else:
            with open(self.p(rel), "w", encoding="utf-8", newline="") as fh:
                fh.write(data)
        trace.record(self.gov, call)

    def bash(self, argv: list[str], writes: tuple[str, ...] = (), deletes: tuple[str, ...] = ()) -> None:
        """A governed shell command (the shell analysis' writes/deletes given here, the command really run)."""
        call = self._call(tool="Bash", kind="exec", shell=NS(writes=list(writes), deletes=list(deletes)))
        trace.capture(self.gov, call)
        subprocess.run(argv, cwd=self.root, check=True)
        trace.record(self.gov, call)

    def hand(self, rel: str, data: str | bytes | None) -> None:
        """An ungoverned change (None: delete)."""
        if data is None:
            self.p(rel).unlink()
        elif isinstance(data, bytes):
            self.p(rel).write_bytes(data)
        else:
            self.p(rel).parent.mkdir(parents=True, exist_ok=True)
            with open(self.p(rel), "w", encoding="utf-8", newline="") as fh:
                fh.write(data)

    def text(self, rel: str) -> str:
        with open(self.p(rel), encoding="utf-8", newline="") as fh:
            return fh.read()

    def audit(self) -> list[dict]:
        return audit(self.root, self.gov.workspace.ledger_file)["ungoverned"]


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(HOSTILE)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    # autocrlf=true would convert on commit; the blobs here are LF like a normal repository's
    git(root, "config", "core.autocrlf", "false")
    (root / ".orchestration").mkdir()
    (root / ".gitignore").write_text(".orchestration/run/\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "data.bin").write_bytes(BIN)
    (root / "docs").mkdir()
    (root / "docs" / "readme.md").write_text("# Title\n\ntext\n")
    (root / "empty.txt").write_bytes(b"")
    (root / "braces.c").write_text("int f() {\n  if (a) {\n    x();\n  }\n}\n")
    (root / "AGENTS.md").write_text("# agents\n")
    for name in ODD:
        (root / name).write_text("a\nb\nc\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    git(root, "config", "core.autocrlf", "true")  # and from now on the user's setting applies
    return Repo(root)


def _lines(s: str) -> list[str]:
    return s.splitlines(keepends=True)


def replace_line(text: str, n: int, new: str) -> str:
    ls = _lines(text)
    ls[n - 1] = new
    return "".join(ls)


def insert_line(text: str, n: int, new: str) -> str:
    ls = _lines(text)
    ls.insert(n - 1, new)
    return "".join(ls)


def delete_line(text: str, n: int) -> str:
    ls = _lines(text)
    del ls[n - 1]
    return "".join(ls)


# ----------------------------------------------------------------------------------------- ungoverned scenarios
# each: (name, action(repo), expected {path: (kind, ranges or None, removed or None)})

def u_modify(r: Repo) -> None:
    r.hand("src/app.py", replace_line(APP, 5, "HAND\n"))


def u_append(r: Repo) -> None:
    r.hand("src/app.py", APP + "appended\n")


def u_delete_line(r: Repo) -> None:
    r.hand("src/app.py", delete_line(APP, 7))


def u_new_file(r: Repo) -> None:
    r.hand("notes.txt", "x\ny\n")


def u_new_empty(r: Repo) -> None:
    r.hand("new_empty.txt", "")


def u_binary(r: Repo) -> None:
    r.hand("data.bin", BIN[:-1] + b"\x00")


def u_rm(r: Repo) -> None:
    r.hand("docs/readme.md", None)


def u_mv(r: Repo) -> None:
    os.rename(r.p("docs/readme.md"), r.p("docs/moved.md"))


def u_truncate(r: Repo) -> None:
    r.hand("src/app.py", "")


def u_crlf_plus_one(r: Repo) -> None:
    r.hand("src/app.py", replace_line(APP, 3, "HAND\n").replace("\n", "\r\n"))


def u_inside_governed(r: Repo) -> None:
    r.write("src/app.py", replace_line(APP, 2, "governed\n"))
    r.hand("src/app.py", insert_line(r.text("src/app.py"), 10, "HAND\n"))


def u_deletion_inside_governed(r: Repo) -> None:
    r.write("src/app.py", replace_line(APP, 2, "governed\n"))
    r.hand("src/app.py", delete_line(r.text("src/app.py"), 12))


def u_rm_governed_new(r: Repo) -> None:
    r.write("gen.py", "x = 1\n")
    r.hand("gen.py", None)


def u_rm_governed_tracked(r: Repo) -> None:
    r.write("src/app.py", replace_line(APP, 2, "governed\n"))
    r.hand("src/app.py", None)


def u_before_governed(r: Repo) -> None:
    r.hand("src/app.py", replace_line(APP, 15, "HAND\n"))
    r.write("src/app.py", replace_line(r.text("src/app.py"), 3, "governed\n"))


def u_binary_after_governed(r: Repo) -> None:
    r.write("data.bin", BIN + b"\x01")
    r.hand("data.bin", BIN + b"\x02")


def u_swap(r: Repo) -> None:
    ls = _lines(APP)
    ls[3], ls[4] = ls[4], ls[3]
    r.hand("src/app.py", "".join(ls))


def u_whitespace(r: Repo) -> None:
    r.hand("src/app.py", replace_line(APP, 9, "line 9   \n"))


def u_nested_new(r: Repo) -> None:
    r.hand("new dir/x y.txt", "z\n")


def u_append_to_governed_new(r: Repo) -> None:
    r.write("gen.py", "a = 1\nb = 2\n")
    r.hand("gen.py", "a = 1\nb = 2\nc = 3\n")


def u_duplicate_brace(r: Repo) -> None:
    r.write("braces.c", "int f() {\n  if (a) {\n    x();\n    y();\n  }\n}\n")
    r.hand("braces.c", r.text("braces.c") + "}\n")


def u_empty_to_content(r: Repo) -> None:
    r.hand("empty.txt", "now\n")


def _no_eol_conversion(r: Repo) -> None:
    git(r.root, "config", "core.autocrlf", "false")  # a repository without an eol conversion


def u_crlf_one_line(r: Repo) -> None:
    _no_eol_conversion(r)
    r.hand("src/app.py", replace_line(APP, 4, "line 4\r\n"))


def u_crlf_whole_file(r: Repo) -> None:
    _no_eol_conversion(r)
    r.hand("src/app.py", APP.replace("\n", "\r\n"))


def u_crlf_one_line_with_text_attribute(r: Repo) -> None:
    r.hand(".gitattributes", "*.md -text\n")  # autocrlf=true stays on: the attribute turns the conversion off
    r.hand("docs/readme.md", "# Title\r\n\ntext\n")


def u_missing_final_newline(r: Repo) -> None:
    r.hand("src/app.py", APP[:-1])


def u_binary_lf_to_crlf(r: Repo) -> None:
    r.hand("data.bin", BIN.replace(b"\n", b"\r\n"))  # what an eol "conversion" would be: still a change


def u_binary_new(r: Repo) -> None:
    r.p("assets").mkdir()
    r.hand("assets/new.bin", BIN[::-1])


def u_binary_without_nul_cr_only(r: Repo) -> None:
    blob = bytes(x for x in BIN if x not in (0, 13))
    r.hand("blob.dat", blob)
    git(r.root, "add", "blob.dat")
    git(r.root, "commit", "-qm", "blob")
    _no_eol_conversion(r)
    r.hand("blob.dat", blob.replace(b"\n", b"\r\n", 1))


def u_odd(name: str) -> Callable[[Repo], None]:
    def act(r: Repo) -> None:
        r.hand(name, "a\nB\nc\n")
    return act


UNGOVERNED: list[tuple[str, Callable[[Repo], None], dict]] = [
    ("modify", u_modify, {"src/app.py": ("lines", [[5, 5]], [[5, 5]])}),
    ("append", u_append, {"src/app.py": ("lines", [[21, 21]], None)}),
    ("hand deletion", u_delete_line, {"src/app.py": ("lines-removed", [], [[7, 7]])}),
    ("new file", u_new_file, {"notes.txt": ("lines", [[1, 2]], None)}),
    ("new empty file", u_new_empty, {"new_empty.txt": ("file", [], None)}),
    ("modified binary", u_binary, {"data.bin": ("binary", [], None)}),
    ("rm tracked file", u_rm, {"docs/readme.md": ("deleted", [], None)}),
    ("hand mv", u_mv, {"docs/readme.md": ("deleted", [], None), "docs/moved.md": ("lines", [[1, 3]], None)}),
    ("truncate", u_truncate, {"src/app.py": ("lines-removed", [], [[1, 20]])}),
    ("crlf conversion plus one line", u_crlf_plus_one, {"src/app.py": ("lines", [[3, 3]], [[3, 3]])}),
    ("hand insert inside governed file", u_inside_governed, {"src/app.py": ("lines", [[10, 10]], None)}),
    ("hand deletion inside governed file", u_deletion_inside_governed,
     {"src/app.py": ("lines-removed", [], [[12, 12]])}),
    ("rm of a governed new file", u_rm_governed_new, {"gen.py": ("deleted", [], None)}),
    ("rm of a governed tracked file", u_rm_governed_tracked, {"src/app.py": ("deleted", [], None)}),
    ("hand edit before a governed edit", u_before_governed, {"src/app.py": ("lines", [[15, 15]], [[15, 15]])}),
    ("binary changed after governed write", u_binary_after_governed, {"data.bin": ("binary", [], None)}),
    ("swapped lines", u_swap, {"src/app.py": ("lines", None, None)}),
    ("whitespace only", u_whitespace, {"src/app.py": ("lines", [[9, 9]], [[9, 9]])}),
    ("new file in new dir with spaces", u_nested_new, {"new dir/x y.txt": ("lines", [[1, 1]], None)}),
    ("append to governed new file", u_append_to_governed_new, {"gen.py": ("lines", [[3, 3]], None)}),
    ("duplicate brace after governed edit", u_duplicate_brace, {"braces.c": ("lines", [[7, 7]], None)}),
    ("empty file given content", u_empty_to_content, {"empty.txt": ("lines", [[1, 1]], None)}),
    # line endings and binaries (issue 22 item 6): a change like any other
    ("crlf on one line", u_crlf_one_line, {"src/app.py": ("lines", [[4, 4]], None)}),
    ("crlf on every line without conversion", u_crlf_whole_file, {"src/app.py": ("lines", [[1, 20]], None)}),
    ("crlf on one line of a -text file", u_crlf_one_line_with_text_attribute,
     {"docs/readme.md": ("lines", [[1, 1]], None)}),
    ("final newline removed", u_missing_final_newline, {"src/app.py": ("lines", [[20, 20]], None)}),
    ("binary LF to CRLF", u_binary_lf_to_crlf, {"data.bin": ("binary", [], None)}),
    ("binary created", u_binary_new, {"assets/new.bin": ("binary", [], None)}),
    ("NUL-free binary CR only", u_binary_without_nul_cr_only, {"blob.dat": ("lines", [[1, 1]], None)}),
] + [(f"odd name {n!r}", u_odd(n), {n: ("lines", [[2, 2]], [[2, 2]])}) for n in ODD]


@pytest.mark.parametrize("name,act,expected", UNGOVERNED, ids=[u[0] for u in UNGOVERNED])
def test_ungoverned_edit_is_reported_exactly(repo: Repo, name: str, act: Callable[[Repo], None],
                                             expected: dict) -> None:
    act(repo)
    got = {f["path"]: f for f in repo.audit()}
    assert set(got) == set(expected), got
    for path, (kind, ranges, removed) in expected.items():
        f = got[path]
        assert f["kind"] == kind, f
        if ranges is not None:
            assert f["ranges"] == ranges, f
        if removed is not None:
            assert f.get("removed") == removed, f


# -------------------------------------------------------------------------------------------- governed scenarios

def g_edit(r: Repo) -> None:
    r.write("src/app.py", replace_line(APP, 4, "changed\n"))


def g_new(r: Repo) -> None:
    r.write("pkg/new.py", "def f():\n    return 1\n")


def g_new_empty(r: Repo) -> None:
    r.write("pkg/__init__.py", "")


def g_binary_create(r: Repo) -> None:
    r.bash(["cp", "data.bin", "copy.bin"], writes=["copy.bin"])


def g_binary_modify(r: Repo) -> None:
    (r.root.parent / "other.bin").write_bytes(BIN + b"more")
    r.bash(["cp", str(r.root.parent / "other.bin"), "data.bin"], writes=["data.bin"])


def g_mv(r: Repo) -> None:
    r.bash(["mv", "docs/readme.md", "docs/intro.md"], writes=["docs/intro.md"], deletes=["docs/readme.md"])


def g_rm(r: Repo) -> None:
    r.bash(["rm", "docs/readme.md"], deletes=["docs/readme.md"])


def g_delete_lines(r: Repo) -> None:
    r.write("src/app.py", delete_line(delete_line(APP, 8), 8))


def g_odd(name: str) -> Callable[[Repo], None]:
    def act(r: Repo) -> None:
        r.write(name, "a\nchanged\nc\n")
    return act


def g_sequence(r: Repo) -> None:
    r.write("src/app.py", replace_line(APP, 4, "one\n"))
    r.write("src/app.py", insert_line(r.text("src/app.py"), 10, "two\n"))
    r.write("src/app.py", delete_line(r.text("src/app.py"), 15))


def g_two_files(r: Repo) -> None:
    r.write("src/app.py", APP + "tail\n")
    r.write("docs/readme.md", "# Title\n\nmore text\n")


def g_truncate(r: Repo) -> None:
    r.write("src/app.py", "")


def g_crlf_checkout(r: Repo) -> None:
    r.hand("src/app.py", APP.replace("\n", "\r\n"))  # what checkout with core.autocrlf=true writes
    r.write("src/app.py", replace_line(r.text("src/app.py"), 6, "governed\r\n"))


def g_create_then_edit(r: Repo) -> None:
    r.write("gen.py", "a = 1\n")
    r.write("gen.py", "a = 1\nb = 2\n")


def g_mv_then_edit(r: Repo) -> None:
    r.bash(["mv", "docs/readme.md", "docs/intro.md"], writes=["docs/intro.md"], deletes=["docs/readme.md"])
    r.write("docs/intro.md", "# Intro\n\ntext\n")


def g_duplicates(r: Repo) -> None:
    r.write("braces.c", "int f() {\n  if (a) {\n    x();\n  }\n  if (b) {\n    y();\n  }\n}\n")


def g_top_and_bottom(r: Repo) -> None:
    r.write("src/app.py", "import os\n" + APP + "end\n")


def g_overwrite(r: Repo) -> None:
    r.write("src/app.py", "completely\nnew\n")


def g_create_then_rm(r: Repo) -> None:
    r.write("tmp.txt", "x\n")
    r.bash(["rm", "tmp.txt"], deletes=["tmp.txt"])


def g_governance_files(r: Repo) -> None:
    r.write("src/app.py", APP + "x\n")
    r.hand("AGENTS.md", "# agents\n\n- a lesson\n")  # written by `orch lesson`, not an agent tool call
    r.hand(".orchestration/active_intents.yaml", "active_intents: []\n")


def g_crlf_one_line(r: Repo) -> None:
    _no_eol_conversion(r)
    r.write("src/app.py", replace_line(APP, 4, "line 4\r\n"))


def g_binary_lf_to_crlf(r: Repo) -> None:
    r.write("data.bin", BIN.replace(b"\n", b"\r\n"))


def g_crlf_one_line_converted_by_git(r: Repo) -> None:
    r.hand("src/app.py", replace_line(APP, 4, "line 4\r\n"))  # autocrlf=true: git stores it as LF, no change


def g_empty_gets_content(r: Repo) -> None:
    r.write("empty.txt", "now\n")


GOVERNED: list[tuple[str, Callable[[Repo], None]]] = [
    ("edit", g_edit), ("new file", g_new), ("new empty file", g_new_empty), ("binary create", g_binary_create),
    ("binary modify", g_binary_modify), ("mv", g_mv), ("rm", g_rm), ("delete lines", g_delete_lines),
    ("three edits in a row", g_sequence), ("two files", g_two_files), ("truncate", g_truncate),
    ("crlf checkout then edit", g_crlf_checkout), ("create then edit", g_create_then_edit),
    ("mv then edit", g_mv_then_edit), ("duplicate lines", g_duplicates), ("top and bottom", g_top_and_bottom),
    ("overwrite", g_overwrite), ("create then rm", g_create_then_rm), ("governance files", g_governance_files),
    ("empty file gets content", g_empty_gets_content), ("crlf on one line", g_crlf_one_line),
    ("binary LF to CRLF", g_binary_lf_to_crlf), ("crlf that git converts back", g_crlf_one_line_converted_by_git),
] + [(f"odd name {n!r}", g_odd(n)) for n in ODD]


@pytest.mark.parametrize("name,act", GOVERNED, ids=[g[0] for g in GOVERNED])
def test_governed_work_is_not_flagged(repo: Repo, name: str, act: Callable[[Repo], None]) -> None:
    act(repo)
    assert repo.audit() == []
    assert ledger.verify(repo.gov.workspace.ledger_file).ok


def test_suite_size() -> None:
    assert len(UNGOVERNED) >= 31 and len(GOVERNED) >= 26


def test_one_filter_decides_what_is_audited() -> None:
    assert not audited(".orchestration/agent_trace.jsonl") and not audited("AGENTS.md")
    assert not audited(".gitattributes") and not audited(".claude/settings.json")
    assert audited("src/app.py") and audited("docs/AGENTS.md")


def test_cli_prints_odd_names_on_one_line(repo: Repo, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.commands import trace as cmd
    for n in ODD:
        repo.hand(n, "a\nB\nc\n")
    monkeypatch.chdir(repo.root)
    assert cmd.main(["trace", "audit"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(ODD) and any(x.startswith("new\\nline.txt: ungoverned line(s) 2") for x in out), out
    assert cmd.main(["trace", "audit", "--json"]) == 1
    import json
    assert {f["path"] for f in json.loads(capsys.readouterr().out)["ungoverned"]} == set(ODD)


def test_workspace_in_a_subdirectory_of_the_repository(tmp_path: Path) -> None:
    top = tmp_path / "top"
    ws = top / "sub dir"
    (ws / ".orchestration").mkdir(parents=True)
    git(top, "init", "-q")
    (ws / "a.txt").write_text("1\n")
    (top / "outside.txt").write_text("o\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "i")
    r = Repo(ws)
    r.write("a.txt", "1\n2\n")
    (top / "outside.txt").write_text("changed\n")  # outside the workspace: not this audit's business
    assert r.audit() == []
    r.hand("a.txt", "1\n2\n3\n")
    assert [(f["path"], f["ranges"]) for f in r.audit()] == [("a.txt", [[3, 3]])]


def test_unborn_head(tmp_path: Path) -> None:
    root = tmp_path / "w"
    (root / ".orchestration").mkdir(parents=True)
    git(root, "init", "-q")
    r = Repo(root)
    r.write("a.py", "x = 1\n")
    r.hand("b.py", "y\n")
    res = audit(root, r.gov.workspace.ledger_file)
    assert res["head"] is None and [f["path"] for f in res["ungoverned"]] == ["b.py"]
