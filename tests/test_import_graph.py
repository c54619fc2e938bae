"""The package's module graph has no import cycle, and every engine module imports first in a fresh interpreter.

Three static graphs, all cycle-free:

- module level, including imports under ``if TYPE_CHECKING:`` (a cycle there is still a design cycle: ``pre/*``
  needing ``pipeline`` for a type while ``pipeline`` imports ``pre/*``);
- every runtime import, including those inside functions, excluding ``if TYPE_CHECKING:`` blocks. Deferring an
  import keeps a heavy module off the hot path until it is needed, which is fine; a deferred import that closes a
  cycle is still a design cycle (the knowledge both sides need belongs in a third module below them);
- their union: a typing-only import one way and a deferred import the other way is a circle too.

And the top level is layered (:data:`LAYERS`): a module imports only modules of its own package or of a package
listed before it, in every one of those graphs. The list is the architecture (docs/architecture.md, "The map").

A package's ``__init__`` importing its submodules (to re-export them) is an edge like any other; the implicit
import of a parent package when a submodule is imported is not modelled.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import orchestrator

PACKAGE = Path(orchestrator.__file__).parent


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__":
            continue
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, mods: dict[str, Path], *, runtime: bool = False, top: Path = PACKAGE) -> set[str]:
    """The orchestrator modules ``path`` imports.

    Default: at module level (TYPE_CHECKING blocks included). ``runtime``: anywhere (function and class bodies
    included), except in ``if TYPE_CHECKING:`` blocks (never executed). ``top``: the ``orchestrator`` directory.
    """
    out: set[str] = set()
    package = ".".join(path.relative_to(top.parent).with_suffix("").parts[:-1])

    def record(node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
            return
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*up, base] if base else up)
        subs = [f"{base}.{a.name}" for a in node.names]
        out.update(s for s in subs if s in mods)
        if any(s not in mods for s in subs):
            out.add(base)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                record(node)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    def visit_runtime(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                record(child)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_runtime(ast.Module(body=[stmt], type_ignores=[]))
            else:
                visit_runtime(child)

    tree = ast.parse(path.read_text(encoding="utf-8"))
    if runtime:
        visit_runtime(tree)
    else:
        visit(tree.body)
    return {m for m in out if m in mods}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycle_among_orchestrator_modules() -> None:
    mods = _modules()
    graph = {name: _imports(path, mods) - {name} for name, path in mods.items()}
    assert _cycles(graph) == []


def _union() -> dict[str, set[str]]:
    mods = _modules()
    return {name: (_imports(path, mods) | _imports(path, mods, runtime=True)) - {name} for name, path in mods.items()}


def test_no_import_cycle_in_the_union_of_typing_only_and_deferred_imports() -> None:
    """``context`` imported ``pre.intentignore`` inside a function while that module imported ``context`` for a type:
    neither graph alone saw the circle (issue 31)."""
    assert sorted(_cycles(_union())) == []


#: the top-level packages (and modules) from the bottom up: each may import itself and what is listed before it.
#: One line per layer; the ``__init__`` of each package says what it owns and what it may import.
LAYERS = [
    "_version", "core",                 # leaves: the vocabulary (models, errors, paths, globs, fsutil, governance …)
    "state",                            # on-disk runtime state: sessions, leases, refusals, the machine key
    "vcs",                              # git: the CLI wrapper, hook dirs, revisions, worktrees
    "secrets",                          # secret-file patterns, the scan, tracked secrets
    "shell",                            # the shell analyzer
    "classify",                         # mutation classification
    "egress",                           # the egress proxy: allow-lists, the server, the person's registries
    "sandbox",                          # the kernel sandbox (plans, launchers)
    "config",                           # the governance files: workspace, intents, policy, .intentignore
    "approvals",                        # the approval broker, risk classes, previews
    "ledger",                           # the trace ledger
    "telemetry",                        # governance telemetry
    "pre",                              # the hook contract (Context) and the pre-hooks
    "post",                             # the post-hooks
    "engine",                           # the Governor
    "agent",                            # the reference tool loop
    "adapters",                         # one per agent CLI, the MCP server
    "daemon",                           # orch serve
    "views",                            # read models a person sees (Activity)
    "tui",                              # the Textual console
    "web",                              # the web console (orch console): its readers are the TUI's (tui.data)
    "cli",                              # argparse wiring and the error boundary
    "commands",                         # one module per `orch` subcommand
    "hookclient",                       # the stdlib-only hook client installed hooks run by path
    "data",                             # templates and the demo project (no imports)
]


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_top_level_package_has_a_layer() -> None:
    tops = {_layer(m) for m in _modules()} - {"__init__"}
    assert tops <= set(LAYERS), f"add to LAYERS (and say why in its __init__): {sorted(tops - set(LAYERS))}"
    assert len(LAYERS) == len(set(LAYERS))


def test_imports_go_down_the_layers() -> None:
    """Typing-only and deferred imports included: a layer that needs a type from above it has the wrong layer."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    rank["__init__"] = len(LAYERS)  # orchestrator/__init__.py re-exports the public API: it may import anything
    wrong = sorted(f"{src} -> {dst}" for src, dsts in _union().items() for dst in dsts
                   if rank[_layer(dst)] > rank[_layer(src)])
    assert wrong == []


def test_each_package_says_what_it_owns_and_may_import() -> None:
    for name in LAYERS:
        init = PACKAGE / name / "__init__.py"
        if not init.exists() or name == "data":
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc) > 80, f"{init}: a docstring that says what the package owns and what it may import"


def test_the_top_level_holds_packages_and_a_handful_of_modules() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "_version.py", "cli.py", "hookclient.py"]


def test_no_import_cycle_counting_function_level_imports() -> None:
    mods = _modules()
    graph = {name: _imports(path, mods, runtime=True) - {name} for name, path in mods.items()}
    assert sorted(_cycles(graph)) == [], "import cycles counting imports inside functions (TYPE_CHECKING excluded)"


def test_shell_rules_hand_inner_code_back_without_importing_the_walker() -> None:
    """orchestrator.shell imports one way (parse/words/programs/analysis -> run -> rules -> dispatch -> walker ->
    api), also at call time: rules hand inner code back through the walker and the accumulator they are given
    (``run._Run.sub/code/isolated/verdict``) instead of importing the walker, dispatcher or api."""
    mods = _modules()
    upper = {"orchestrator.shell.walker", "orchestrator.shell.dispatch", "orchestrator.shell.api"}
    assert not _imports(mods["orchestrator.shell.run"], mods, runtime=True) & upper
    for name, path in mods.items():
        if name.startswith("orchestrator.shell.rules"):
            assert not _imports(path, mods, runtime=True) & upper, name


def test_runtime_graph_sees_function_level_imports_but_not_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "orchestrator"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    from orchestrator import b\n", encoding="utf-8")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from orchestrator import a\n"
                              "else:\n    import orchestrator.c\n", encoding="utf-8")
    (pkg / "c.py").write_text("class C:\n    def m(self):\n        from . import a\n", encoding="utf-8")
    mods = {"orchestrator.a": pkg / "a.py", "orchestrator.b": pkg / "b.py", "orchestrator.c": pkg / "c.py"}
    runtime = {name: _imports(path, mods, runtime=True, top=pkg) for name, path in mods.items()}
    static = {name: _imports(path, mods, top=pkg) for name, path in mods.items()}
    assert runtime == {"orchestrator.a": {"orchestrator.b"}, "orchestrator.b": {"orchestrator.c"},
                       "orchestrator.c": {"orchestrator.a"}}
    assert static == {"orchestrator.a": set(), "orchestrator.b": {"orchestrator.a", "orchestrator.c"},
                      "orchestrator.c": set()}
    assert _cycles(runtime) == [["orchestrator.a", "orchestrator.b", "orchestrator.c"]]


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _engine_modules() -> list[str]:
    """Every package below the adapters: what the hook contract is made of."""
    below = LAYERS[: LAYERS.index("agent")]
    return sorted(name for name in _modules() if _layer(name) in below or name.count(".") == 1)


def test_each_engine_module_imports_first() -> None:
    """Importing any engine module first (nothing of orchestrator loaded yet) works: no module relies on another
    having been imported before it to break a cycle. One interpreter; orchestrator is unloaded between modules."""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for mod in [m for m in sys.modules if m == 'orchestrator' or m.startswith('orchestrator.')]:\n"
        "        del sys.modules[mod]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run([sys.executable, "-c", script, *_engine_modules()], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
