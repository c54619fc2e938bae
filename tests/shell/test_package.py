"""The shell package's structure: public re-exports, every module importable first, one rule registry."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import orchestrator.shell
from orchestrator.shell import RISKS, ShellAnalysis, ShellEntry, analyze

PACKAGE = Path(orchestrator.shell.__file__).parent
ROOT = PACKAGE.parent.parent


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["orchestrator", *path.relative_to(PACKAGE.parent).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def test_public_api() -> None:
    assert orchestrator.shell.__all__ == ["RISKS", "ShellAnalysis", "ShellEntry", "analyze"]
    res = analyze("rm -rf build")
    assert isinstance(res, ShellAnalysis) and res.deletes == ("build",)
    assert "runs-code" in RISKS


def test_entries_are_immutable_records_with_named_fields() -> None:
    made = analyze("mv a b/").entries[0]
    assert type(made) is ShellEntry
    assert (made.write_index, made.op, made.sources, made.named) == (0, "mv", ("a",), True)
    assert made == (0, "mv", ("a",), True) and hash(made) == hash((0, "mv", ("a",), True))  # a tuple underneath
    assert repr(made) == "ShellEntry(write_index=0, op='mv', sources=('a',), named=True)"
    assert not hasattr(made, "__dict__")  # slotted
    for field in ("write_index", "op", "sources", "named", "other"):
        try:
            setattr(made, field, 1)
        except AttributeError:
            continue
        raise AssertionError(f"ShellEntry.{field} was assignable")


def test_an_analysis_with_entries_copies_and_pickles_like_a_tuple_of_tuples() -> None:
    """``ShellAnalysis`` is public API (a frozen dataclass): hosts deep-copy it, or pickle it to another process.
    Plain tuples in ``entries`` always allowed that; their typed replacement must too (a tuple subclass whose
    ``__new__`` takes the fields, not one iterable, needs ``__getnewargs__``)."""
    res = analyze("ln -s a b && mv c d/")
    assert len(res.entries) == 2
    for twin in (copy.copy(res), copy.deepcopy(res), pickle.loads(pickle.dumps(res))):
        assert twin == res and all(type(e) is ShellEntry for e in twin.entries)
    made = res.entries[1]
    assert copy.copy(made) == made and pickle.loads(pickle.dumps(made)).named is True


def test_an_analysis_with_entries_converts_with_dataclasses_asdict() -> None:
    """``dataclasses.asdict`` / ``astuple`` (how a host logs a frozen dataclass as JSON) rebuild every tuple inside:
    a plain one from an iterable, a named one (``_fields``) from its fields."""
    res = analyze("mv c d/")
    assert dataclasses.asdict(res)["entries"] == ((0, "mv", ("c",), True),)
    assert json.dumps(dataclasses.asdict(res)["entries"]) == '[[0, "mv", ["c"], true]]'
    assert res.entries[0]._asdict() == {"write_index": 0, "op": "mv", "sources": ("c",), "named": True}
    at = [f.name for f in dataclasses.fields(res)].index("entries")
    assert dataclasses.astuple(res)[at] == ((0, "mv", ("c",), True),)


def test_each_module_imports_first() -> None:
    """No module may need another imported before it (the package imports one way; see tests/test_import_graph.py)."""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for mod in [m for m in sys.modules if m == 'orchestrator' or m.startswith('orchestrator.')]:\n"
        "        del sys.modules[mod]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        assert sys.modules['orchestrator.shell'].analyze('ls | wc -l').kind == 'read_only'\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script, *_modules()], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_lazy_modules_stay_off_the_import_path() -> None:
    code = ("import sys, orchestrator.shell as s; s.analyze('ls -la'); "
            "print(sorted(m for m in ('orchestrator.shell.rules.git_writes', 'orchestrator.shell.braces') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_registry_index_matches_the_family_tables() -> None:
    """_FAMILY_OF (what the dispatcher looks up without importing every family) says exactly what the tables say."""
    from orchestrator.shell import rules

    by_tables = {name: fam for fam in rules.FAMILIES for name in rules.family(fam).RULES}
    assert rules._FAMILY_OF == by_tables
    assert len(rules.all_rules()) == len(by_tables)  # no program in two families
    assert not rules._READ_ONLY & set(by_tables)
    assert rules._SERVICE_NAMES == set(rules.family("services")._SERVICE_CLIS)


def test_rule_families_load_on_demand() -> None:
    code = ("import sys, orchestrator.shell as s; s.analyze('git status && ls -la && pytest -q'); "
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('orchestrator.shell.rules.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
    loaded = set(ast.literal_eval(out.stdout.strip()))
    assert {"git", "outside", "secrets"} <= loaded, out.stderr
    assert not loaded & {"system", "services", "databases", "archive"}, loaded
