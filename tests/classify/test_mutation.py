"""classify: computed mutation classes for Python (ast), bash (tree-sitter) and the generic token heuristic."""

from __future__ import annotations

import pytest

from orchestrator.classify.mutation import AST_REFACTOR, INTENT_EVOLUTION, classify, combine, normalise_declared
from orchestrator.core.diffing import changed_ranges

R, E = AST_REFACTOR, INTENT_EVOLUTION

PY_CASES = [
    ("reformat", "def f(a,b):\n    return a+b\n", "def f(a, b):\n    # add\n    return (a +\n            b)\n", R),
    ("comment only", "x = 1\n", "# note\nx = 1  # why\n", R),
    ("docstring", "def f():\n    return 1\n", 'def f():\n    """Doc."""\n    return 1\n', R),
    ("consistent rename", "def f(total, x):\n    total = total + x\n    return total\n\nprint(f(1, 2))\n",
     "def g(acc, x):\n    acc = acc + x\n    return acc\n\nprint(g(1, 2))\n", R),
    ("method rename", "class A:\n    def foo(self):\n        return 1\n\nA().foo()\n",
     "class A:\n    def bar(self):\n        return 1\n\nA().bar()\n", R),
    ("import alias", "import os\nos.getcwd()\n", "import os as o\no.getcwd()\n", R),
    ("extract constant", "def days(x):\n    return x * 86400\n",
     "SECONDS_PER_DAY = 86400\n\n\ndef days(x):\n    return x * SECONDS_PER_DAY\n", R),
    ("inline constant", "K = 3\n\ndef f():\n    return K\n", "def f():\n    return 3\n", R),
    ("extract constant with new value", "def days(x):\n    return x * 86400\n",
     "SECONDS_PER_DAY = 86401\n\n\ndef days(x):\n    return x * SECONDS_PER_DAY\n", E),
    ("changed constant", "x = 1\nprint(x)\n", "x = 2\ny = 3\nprint(x)\n", E),
    ("new branch", "def f(x):\n    return x\n", "def f(x):\n    if x < 0:\n        return 0\n    return x\n", E),
    ("new function", "def f(x):\n    return x\n", "def f(x):\n    return x\n\n\ndef g():\n    return 2\n", E),
    ("builtin swapped", "print(1)\n", "log(1)\n", E),
    ("swapped operands", "def f(a, b):\n    return a - b\n", "def f(a, b):\n    return b - a\n", E),
    ("inconsistent rename", "def f(a, b):\n    return a + b\n", "def f(a, b):\n    return a + a\n", E),
    ("broken syntax", "x = 1\n", "x = (\n", E),
]


@pytest.mark.parametrize("name,old,new,expected", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_python_cases_whole_file(name: str, old: str, new: str, expected: str) -> None:
    cls, evidence = classify("m.py", old, new)
    assert cls == expected, evidence
    assert evidence.startswith("python")


@pytest.mark.parametrize("name,old,new,expected", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_python_cases_region_mode_inside_a_big_file(name: str, old: str, new: str, expected: str) -> None:
    """Same cases embedded in a 600-line module: the region classifier must agree with the whole-file one."""
    pad_top = "".join(f"def top_{i}(v):\n    return v + {i}\n\n\n" for i in range(75))
    pad_bot = "".join(f"def bottom_{i}(v):\n    return v * {i}\n\n\n" for i in range(75))
    o, n = pad_top + old + "\n\n" + pad_bot, pad_top + new + "\n\n" + pad_bot
    _, hunks = changed_ranges(o, n)
    cls, evidence = classify("m.py", o, n, hunks)
    assert cls == expected, evidence


def test_region_mode_catches_rename_of_a_name_used_elsewhere() -> None:
    body = "def helper(v):\n    return v\n\n\n" + "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(40))
    old = body + "print(helper(1))\n"
    new = old.replace("def helper(v)", "def assist(v)")
    _, hunks = changed_ranges(old, new)
    assert classify("m.py", old, new, hunks)[0] == E  # the caller still says helper(...): behaviour changed
    new2 = new.replace("print(helper(1))", "print(assist(1))")
    _, hunks = changed_ranges(old, new2)
    assert classify("m.py", old, new2, hunks)[0] == R


def test_evidence_names_functions_not_contents() -> None:
    cls, ev = classify("m.py", "def f(x):\n    return x\n", "def f(x):\n    return x\n\n\ndef secret_sauce():\n"
                       "    return 'hunter2'\n")
    assert cls == E and "secret_sauce" in ev and "hunter2" not in ev


def test_file_level_operations() -> None:
    assert classify("a.py", None, "x = 1\n")[0] == E
    assert classify("a.py", "x = 1\n", None)[0] == E
    assert classify("a.py", "x = 1\n", "x = 1\n")[0] == R


def test_bash_with_tree_sitter() -> None:
    cls, ev = classify("run.sh", "# c\necho hi\n", "echo   hi  # x\n")
    assert cls == R and "tree-sitter" in ev
    assert classify("run.sh", "echo hi\n", "echo ho\n")[0] == E
    assert classify("run.sh", "rm -f a\n", "rm -rf a\n")[0] == E


@pytest.mark.parametrize("path,old,new,expected", [
    ("a.go", "func f() {\n\treturn 1\n}\n", "func f() {\n    return 1\n}\n", R),
    ("a.go", "// c\nx := 1\n", "x := 1 /* y */\n", R),
    ("a.go", 'x := "// not a comment"\n', 'x := "// still"\n', E),
    ("a.rb", "a = 1 # c\n", "a = 1\n", R),
    ("a.rb", "a = 1\n", "a = 2\n", E),
])
def test_generic_token_heuristic(path: str, old: str, new: str, expected: str) -> None:
    cls, ev = classify(path, old, new)
    assert cls == expected, ev
    assert "heuristic" in ev


@pytest.mark.parametrize("path,old,new,expected,engine", [
    ("a.ts", "// c\nlet a = 1;\n", "let a = 1; /* x */\n", R, "tree-sitter"),
    ("a.ts", "let a = 1;\n", "let a = 2;\n", E, "tree-sitter"),
    ("a.ts", 'let s = "// not a comment";\n', 'let s = "// still";\n', E, "tree-sitter"),
    ("a.js", "let s = `a // b`;\n", "let s = `a // c`;\n", E, "tree-sitter"),  # not a comment in a template
    ("a.ts", "let total = 1;\nuse(total);\n", "let acc = 1;\nuse(acc);\n", R, "tree-sitter"),
    ("a.yaml", "a: 1  # c\n", "a: 1\n", R, "parsed"),
    ("a.yaml", "a: 1\n", "a: 2\n", E, "parsed"),
    ("a.yaml", "a:\n  x: 1\nb: {}\n", "a: {}\nb:\n  x: 1\n", E, "parsed"),  # key moved into another mapping
    ("a.json", '{"a": 1, "b": 2}', '{"b": 2, "a": 1}', R, "parsed"),
    ("README.md", "Hello  world\n", "Hello world\n", R, "markdown"),
    ("README.md", "Hello world\n", "Goodbye world\n", E, "markdown"),
])
def test_parsers_per_language(path: str, old: str, new: str, expected: str, engine: str) -> None:
    cls, ev = classify(path, old, new)
    assert cls == expected, ev
    assert engine in ev


@pytest.mark.parametrize("old,new,expected", [
    ("def load(p, mode):\n    return open(p, mode=mode)\n", "def load(p, m):\n    return open(p, m=m)\n", E),
    ("def f(resp):\n    status = resp.status\n    return status\n",
     "def f(resp):\n    code = resp.code\n    return code\n", E),
    ("DEBUG = False\n", "DEBUG = True\n", E),
    ("import sys\nimport os\n", "import os\nimport sys\n", R),
    ("def f(a, b):\n    return a * b + 1\n", "def f(a, b):\n    p = a * b\n    return p + 1\n", R),
    ("def f(a):\n    return a\n", "def f(a: int) -> int:\n    return a\n", R),
])
def test_issue_17_python_cases(old: str, new: str, expected: str) -> None:
    assert classify("m.py", old, new)[0] == expected
    _, hunks = changed_ranges(old, new)
    assert classify("m.py", old, new, hunks)[0] == expected


def test_declared_class_normalisation_and_combine() -> None:
    assert normalise_declared("refactor") == R
    assert normalise_declared("intent-evolution") == E
    assert normalise_declared("bogus") is None and normalise_declared(None) is None
    assert combine([R, E, R]) == E and combine([R]) == R


def test_js_region_holds_names_used_by_unchanged_statements() -> None:
    """Only the changed top-level statements are normalised; a renamed function whose callers were not updated is
    evolution, with them it is a rename; locals of an unchanged function do not pin a name."""
    big = "".join(f"function f{i}(a) {{\n  const t = a + {i};\n  return t;\n}}\n" for i in range(50))
    old = "function helper(v) {\n  return v;\n}\n" + big + "helper(1);\n"
    new = old.replace("function helper(v)", "function assist(v)")
    assert classify("m.js", old, new)[0] == E
    assert classify("m.js", old, new.replace("helper(1);", "assist(1);"))[0] == R
    assert classify("m.js", old, old.replace("const t = a + 3;\n  return t;", "const u = a + 3;\n  return u;"))[0] == R


@pytest.mark.parametrize("old,new,expected", [
    ("let a = 1;\nuse(a);\n", "const a = 1;\nuse(a);\n", R),
    ("let a = 1;\na = 2;\n", "const a = 1;\na = 2;\n", E),  # a TypeError now
    ("let a = 1;\nuse(a);\na++;\n", "const a = 1;\nuse(a);\na++;\n", E),
    ("const f = (x) => { return x + 1; };\n", "const f = x => x + 1;\n", R),
    ("function f({a}) { return a; }\n", "function f({a: b}) { return b; }\n", R),
    ("const o = {a: 1};\n", "const o = {b: 1};\n", E),
])
def test_js_equivalent_spellings(old: str, new: str, expected: str) -> None:
    assert classify("m.js", old, new)[0] == expected


@pytest.mark.parametrize("old,new,expected", [
    ("def f(s):\n    m = g(s)\n    if m:\n        return m\n", "def f(s):\n    if (m := g(s)):\n        return m\n", R),
    ("def f(n):\n    return 'n={}'.format(n)\n", "def f(n):\n    return f'n={n}'\n", R),
    ("def f(n):\n    return '{0!r:>3}'.format(n)\n", "def f(n):\n    return f'{n!r:>3}'\n", R),
    ("def f(n):\n    return 'n={}'.format(n)\n", "def f(n):\n    return f'n={n + 1}'\n", E),
    ("def f(a, b):\n    return '{}'.format(a, b)\n", "def f(a, b):\n    return f'{a}'\n", E),  # b no longer evaluated
    ("def f():\n    x = g()\n    h(x)\n    return x\n", "def f():\n    x: int = g()\n    h(x)\n    return x\n", R),
])
def test_python_equivalent_spellings(old: str, new: str, expected: str) -> None:
    assert classify("m.py", old, new)[0] == expected
