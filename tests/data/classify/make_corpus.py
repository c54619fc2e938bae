"""Write corpus.jsonl: labelled before/after pairs for the mutation classifier (run to regenerate).

Each pair is labelled the way a reviewer judges *behaviour*: R = refactor (AST_REFACTOR), E = evolution
(INTENT_EVOLUTION). The labels follow the rules in docs/ledger.md §3 (type hints, docstrings, comments, import order,
Markdown wrapping = refactor). Written by hand; some pairs are known to be hard for the classifier — they stay in.
"""

from __future__ import annotations

import json
from pathlib import Path

R, E = "R", "E"

PY = [
    # renames
    ("consistent local rename", "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
     "def f(xs):\n    acc = 0\n    for x in xs:\n        acc += x\n    return acc\n", R),
    ("rename function and call", "def area(r):\n    return 3 * r * r\n\nprint(area(2))\n",
     "def surface(r):\n    return 3 * r * r\n\nprint(surface(2))\n", R),
    ("rename parameter and keyword caller", "def load(path, mode):\n    return open(path, mode)\n\nload('a', mode='r')\n",
     "def load(path, how):\n    return open(path, how)\n\nload('a', how='r')\n", R),
    ("replace_all hits external keyword", "def load(p, mode):\n    return open(p, mode=mode)\n",
     "def load(p, m):\n    return open(p, m=m)\n", E),
    ("rename also hits attribute read", "def show(resp):\n    status = resp.status\n    return status + 1\n",
     "def show(resp):\n    code = resp.code\n    return code + 1\n", E),
    ("rename parameter, keyword caller not updated", "def g(a, size):\n    return a * size\n\ng(1, size=2)\n",
     "def g(a, n):\n    return a * n\n\ng(1, size=2)\n", E),
    ("rename same local in one of two functions", "def f():\n    i = 1\n    print(i)\n\ndef g():\n    i = 2\n    print(i)\n",
     "def f():\n    j = 1\n    print(j)\n\ndef g():\n    i = 2\n    print(i)\n", R),
    ("self attribute rename", "class C:\n    def __init__(self):\n        self.count = 0\n\n    def inc(self):\n        self.count += 1\n",
     "class C:\n    def __init__(self):\n        self.n = 0\n\n    def inc(self):\n        self.n += 1\n", R),
    ("method rename with self call", "class C:\n    def a(self):\n        return self.b()\n\n    def b(self):\n        return 1\n",
     "class C:\n    def a(self):\n        return self.c()\n\n    def c(self):\n        return 1\n", R),
    ("inconsistent rename", "def f(a, b):\n    return a + b\n", "def f(a, b):\n    return a + a\n", E),
    ("builtin swapped", "def f(x):\n    print(x)\n", "def f(x):\n    log(x)\n", E),
    ("import alias", "import json\n\ndef f(s):\n    return json.loads(s)\n", "import json as j\n\ndef f(s):\n    return j.loads(s)\n", R),
    ("different import", "from os import path\n", "from os import sep\n", E),
    ("loop var rename", "for item in items:\n    use(item)\n", "for it in items:\n    use(it)\n", R),
    ("except name rename", "try:\n    f()\nexcept ValueError as e:\n    log(e)\n", "try:\n    f()\nexcept ValueError as err:\n    log(err)\n", R),
    # imports
    ("import reorder", "import sys\nimport os\n\nprint(os, sys)\n", "import os\nimport sys\n\nprint(os, sys)\n", R),
    ("from-import names sorted", "from a import y, x\n", "from a import x, y\n", R),
    ("split multi import", "import os, sys\n", "import os\nimport sys\n", R),
    ("new import", "import os\n", "import os\nimport sys\n", E),
    # type hints & docstrings
    ("type hints added", "def f(a, b=None):\n    return a\n",
     "from typing import Optional\n\n\ndef f(a: int, b: Optional[str] = None) -> int:\n    return a\n", R),
    ("variable annotation", "def f():\n    x = []\n    return x\n", "def f():\n    x: list[int] = []\n    return x\n", R),
    ("future annotations", "def f(a):\n    return a\n", "from __future__ import annotations\n\ndef f(a: 'A') -> 'A':\n    return a\n", R),
    ("TYPE_CHECKING block", "import os\n", "from typing import TYPE_CHECKING\nimport os\n\nif TYPE_CHECKING:\n    from x import Y\n", R),
    ("dataclass field type change", "@dataclass\nclass P:\n    x: int\n", "@dataclass\nclass P:\n    x: str\n", E),
    ("docstring added", "def f():\n    return 1\n", 'def f():\n    """One."""\n    return 1\n', R),
    ("docstring reworded", 'class A:\n    """Old."""\n', 'class A:\n    """New words."""\n', R),
    ("comment and format", "x = f(1,2)\n", "# why\nx = f(\n    1,\n    2,\n)\n", R),
    # constants
    ("DEBUG flip unused", "DEBUG = False\nNAME = 'app'\n", "DEBUG = True\nNAME = 'app'\n", E),
    ("timeout value", "TIMEOUT = 30\n\ndef get():\n    return fetch(timeout=TIMEOUT)\n",
     "TIMEOUT = 60\n\ndef get():\n    return fetch(timeout=TIMEOUT)\n", E),
    ("extract constant", "def days(n):\n    return n * 86400\n", "SECONDS = 86400\n\n\ndef days(n):\n    return n * SECONDS\n", R),
    ("inline constant", "K = 3\n\ndef f():\n    return K\n", "def f():\n    return 3\n", R),
    ("new setting", "A = 1\n", "A = 1\nB = 2\n", E),
    # extract variable / function
    ("extract variable", "def f(a, b, c):\n    return a * b + c\n", "def f(a, b, c):\n    prod = a * b\n    return prod + c\n", R),
    ("extract variable into if test", "def f(u):\n    if u.age > 18 and u.ok:\n        go()\n",
     "def f(u):\n    adult = u.age > 18 and u.ok\n    if adult:\n        go()\n", R),
    ("extract variable used twice", "def f(a):\n    return g(a) + g(a)\n", "def f(a):\n    v = g(a)\n    return v + v\n", E),
    ("extract variable out of loop", "def f(xs, k):\n    for x in xs:\n        use(x, k * 2)\n",
     "def f(xs, k):\n    k2 = k * 2\n    for x in xs:\n        use(x, k2)\n", R),
    ("extract function", "def report(xs):\n    total = 0\n    for x in xs:\n        total += x\n    print(total)\n",
     "def _sum(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n\n\ndef report(xs):\n    total = _sum(xs)\n    print(total)\n", R),
    ("extract function statements", "def main(cfg):\n    check(cfg)\n    log('ok')\n    run(cfg)\n",
     "def prepare(cfg):\n    check(cfg)\n    log('ok')\n\n\ndef main(cfg):\n    prepare(cfg)\n    run(cfg)\n", R),
    ("extract method", "class S:\n    def run(self):\n        self.a = 1\n        self.b = 2\n        go()\n",
     "class S:\n    def run(self):\n        self._init()\n        go()\n\n    def _init(self):\n        self.a = 1\n        self.b = 2\n", R),
    ("extract expression function", "def f(p):\n    return p.x * p.x + p.y * p.y\n",
     "def norm2(p):\n    return p.x * p.x + p.y * p.y\n\n\ndef f(p):\n    return norm2(p)\n", R),
    # behaviour
    ("new branch", "def f(x):\n    return x\n", "def f(x):\n    if x < 0:\n        return 0\n    return x\n", E),
    ("changed operator", "def f(a, b):\n    return a - b\n", "def f(a, b):\n    return a + b\n", E),
    ("new function", "def f():\n    return 1\n", "def f():\n    return 1\n\n\ndef g():\n    return 2\n", E),
    ("changed string literal", "msg = 'hello'\nprint(msg)\n", "msg = 'hi'\nprint(msg)\n", E),
    ("argument order", "f(a, b)\n", "f(b, a)\n", E),
    ("removed call", "def f():\n    log()\n    run()\n", "def f():\n    run()\n", E),
    ("broken syntax", "x = 1\n", "x = (\n", E),
    ("keyword value change", "open(p, mode='r')\n", "open(p, mode='rb')\n", E),
    ("decorator added", "def f():\n    pass\n", "@cache\ndef f():\n    pass\n", E),
]

JS = [
    ("a.js", "template literal with //", "const u = `http://a/${x}`;\n", "const u = `http://b/${x}`;\n", E),
    ("a.js", "template literal same", "const u = `http://a/${x}`; // link\n", "const u = `http://a/${x}`;\n", R),
    ("a.js", "string containing //", 'let s = "// not a comment";\n', 'let s = "// still";\n', E),
    ("a.js", "comment only", "// c\nlet a = 1;\n", "let a = 1; /* x */\n", R),
    ("a.js", "semicolons (ASI)", "let a = 1;\nf(a);\n", "let a = 1\nf(a)\n", R),
    ("a.js", "quote style", "f('x');\n", 'f("x");\n', R),
    ("a.js", "trailing comma", "const a = [1, 2, 3,];\n", "const a = [1, 2, 3];\n", R),
    ("a.js", "reformat", "function f(a,b){return a+b}\n", "function f(a, b) {\n  return a + b;\n}\n", R),
    ("a.js", "value change", "let a = 1;\n", "let a = 2;\n", E),
    ("a.js", "local rename", "function f(x) {\n  const total = x + 1;\n  g(total);\n  return total;\n}\n",
     "function f(x) {\n  const sum = x + 1;\n  g(sum);\n  return sum;\n}\n", R),
    ("a.js", "param rename", "function f(a) { return a * 2; }\n", "function f(n) { return n * 2; }\n", R),
    ("a.js", "property rename", "const o = {a: 1};\nuse(o.a);\n", "const o = {b: 1};\nuse(o.b);\n", E),
    ("a.js", "shorthand key changes", "const a = 1;\nexport const o = {a};\n", "const b = 1;\nexport const o = {b};\n", E),
    ("a.js", "exported rename", "export function load() {}\n", "export function fetch() {}\n", E),
    ("a.js", "extract variable", "function f(a, b) { return g(a * b); }\n", "function f(a, b) {\n  const p = a * b;\n  return g(p);\n}\n", R),
    ("a.js", "import reorder", "import b from 'b';\nimport a from 'a';\n", "import a from 'a';\nimport b from 'b';\n", R),
    ("a.js", "specifier reorder", "import {y, x} from 'm';\n", "import {x, y} from 'm';\n", R),
    ("a.js", "new import", "import a from 'a';\n", "import a from 'a';\nimport b from 'b';\n", E),
    ("a.js", "console method", "console.log(x);\n", "console.error(x);\n", E),
    ("a.js", "new branch", "function f(x) { return x; }\n", "function f(x) { if (x < 0) return 0; return x; }\n", E),
    ("a.js", "parens redundant", "const y = (a * b) + c;\n", "const y = a * b + c;\n", R),
    ("a.js", "parens change precedence", "const y = (a + b) * c;\n", "const y = a + b * c;\n", E),
    ("a.jsx", "jsx attribute", "const A = () => <div className=\"a\">hi</div>;\n", "const A = () => <div className=\"b\">hi</div>;\n", E),
    ("a.jsx", "jsx reformat", "const A = () => <div className=\"a\">hi</div>;\n", "const A = () => (\n  <div className=\"a\">hi</div>\n);\n", R),
    ("a.ts", "type annotations", "function f(a) { return a; }\n", "function f(a: number): number { return a; }\n", R),
    ("a.ts", "interface added", "let x = 1;\n", "interface P { x: number }\nlet x = 1;\n", R),
    ("a.ts", "type alias changed", "type Id = string;\nexport const f = (i) => i;\n", "type Id = number;\nexport const f = (i) => i;\n", R),
    ("a.ts", "as cast", "const n = v as number;\n", "const n = v;\n", R),
    ("a.ts", "import type", "import type {A} from './a';\nlet x = 1;\n", "let x = 1;\n", R),
    ("a.ts", "generic args", "const m = new Map<string, number>();\n", "const m = new Map();\n", R),
    ("a.ts", "enum value", "enum C { Red = 1 }\n", "enum C { Red = 2 }\n", E),
    ("a.ts", "template literal comment-like", "const q = `select * -- x // y`;\n", "const q = `select * -- x // z`;\n", E),
    ("a.ts", "class private rename", "class A {\n  private n = 0;\n  inc() { this.n++; }\n}\n",
     "class A {\n  private count = 0;\n  inc() { this.count++; }\n}\n", E),
    ("a.ts", "optional chaining added", "const v = a.b;\n", "const v = a?.b;\n", E),
    ("a.tsx", "tsx prop type", "const A = (p: {x: string}) => <b>{p.x}</b>;\n", "const A = (p: {x: number}) => <b>{p.x}</b>;\n", R),
    ("a.ts", "await added", "async function f() { g(); }\n", "async function f() { await g(); }\n", E),
]

DATA = [
    ("c.yaml", "key reorder", "a: 1\nb: 2\n", "b: 2\na: 1\n", R),
    ("c.yaml", "comment", "a: 1\n", "# note\na: 1  # why\n", R),
    ("c.yaml", "reindent", "a:\n  b: 1\n", "a:\n    b: 1\n", R),
    ("c.yaml", "flow style", "a: [1, 2]\n", "a:\n  - 1\n  - 2\n", R),
    ("c.yaml", "quoting", "a: hello\n", "a: \"hello\"\n", R),
    ("c.yaml", "key moved to other mapping", "db:\n  host: x\n  port: 1\ncache: {}\n", "db:\n  host: x\ncache:\n  port: 1\n", E),
    ("c.yaml", "value change", "replicas: 2\n", "replicas: 3\n", E),
    ("c.yaml", "list reorder", "steps: [a, b]\n", "steps: [b, a]\n", E),
    ("c.yaml", "type change", "on: 1\n", "on: true\n", E),
    ("c.yaml", "string vs number", "v: 1.10\n", "v: \"1.10\"\n", E),
    ("c.yaml", "anchor", "a: &x {k: 1}\nb: *x\n", "a: {k: 1}\nb: {k: 1}\n", R),
    ("c.yaml", "new key", "a: 1\n", "a: 1\nb: 2\n", E),
    ("c.yaml", "nested reorder", "s:\n  x: 1\n  y: 2\n", "s:\n  y: 2\n  x: 1\n", R),
    ("c.yaml", "broken", "a: 1\n", "a: [1\n", E),
    ("c.yaml", "multi doc", "a: 1\n---\nb: 2\n", "a: 1\n---\nb: 3\n", E),
    ("c.yml", "block scalar style", "s: |\n  hi\n", "s: \"hi\\n\"\n", R),
    ("c.json", "reformat", '{"a":1,"b":[1,2]}', '{\n  "a": 1,\n  "b": [1, 2]\n}\n', R),
    ("c.json", "key reorder", '{"a": 1, "b": 2}\n', '{"b": 2, "a": 1}\n', R),
    ("c.json", "value", '{"a": 1}\n', '{"a": 2}\n', E),
    ("c.json", "move key", '{"a": {"x": 1}, "b": {}}\n', '{"a": {}, "b": {"x": 1}}\n', E),
    ("c.json", "null vs missing", '{"a": null}\n', '{}\n', E),
    ("c.json", "array element", '{"a": [1, 2]}\n', '{"a": [1, 2, 3]}\n', E),
    ("c.toml", "reformat", "[tool]\nname=\"x\"\n", "[tool]\nname = \"x\"  # c\n", R),
    ("c.toml", "key reorder", "[t]\na = 1\nb = 2\n", "[t]\nb = 2\na = 1\n", R),
    ("c.toml", "table moved", "[a]\nx = 1\n[b]\n", "[a]\n[b]\nx = 1\n", E),
    ("c.toml", "dotted vs table", "[a]\nb = 1\n", "a.b = 1\n", R),
    ("c.toml", "version bump", "version = \"1.0\"\n", "version = \"1.1\"\n", E),
    ("c.toml", "dependency added", "deps = [\"a\"]\n", "deps = [\"a\", \"b\"]\n", E),
    ("c.yaml", "compose env", "services:\n  web:\n    environment:\n      DEBUG: 'false'\n",
     "services:\n  web:\n    environment:\n      DEBUG: 'true'\n", E),
    ("c.yaml", "ci reorder keys", "job:\n  runs-on: x\n  steps: [a]\n", "job:\n  steps: [a]\n  runs-on: x\n", R),
]

MD = [
    ("README.md", "rewrap", "This is a long\nsentence here.\n", "This is a long sentence here.\n", R),
    ("README.md", "double space", "Hello  world\n", "Hello world\n", R),
    ("README.md", "bullet char", "* a\n* b\n", "- a\n- b\n", R),
    ("README.md", "ordered numbering", "1. a\n2. b\n", "1. a\n1. b\n", R),
    ("README.md", "emphasis style", "a _b_ c\n", "a *b* c\n", R),
    ("README.md", "strong style", "a __b__ c\n", "a **b** c\n", R),
    ("README.md", "setext to atx", "Title\n=====\n\ntext\n", "# Title\n\ntext\n", R),
    ("README.md", "html comment", "text\n", "<!-- todo -->\ntext\n", R),
    ("README.md", "fence style", "```py\nx = 1\n```\n", "~~~py\nx = 1\n~~~\n", R),
    ("README.md", "trailing spaces", "a\n\nb\n", "a   \n\nb\n", R),
    ("README.md", "word change", "Run the tests.\n", "Run the linters.\n", E),
    ("README.md", "heading level", "# A\n", "## A\n", E),
    ("README.md", "link target", "[docs](a.md)\n", "[docs](b.md)\n", E),
    ("README.md", "code block content", "```sh\nmake\n```\n", "```sh\nmake test\n```\n", E),
    ("README.md", "code block indentation", "```py\nif x:\n    y()\n```\n", "```py\nif x:\n  y()\n```\n", E),
    ("README.md", "new section", "# A\n", "# A\n\n## B\n\ntext\n", E),
    ("README.md", "list nesting", "- a\n- b\n", "- a\n  - b\n", E),
    ("README.md", "removed paragraph", "a\n\nb\n", "a\n", E),
    ("README.md", "typo fix", "Teh tool\n", "The tool\n", E),
    ("README.md", "paragraph split", "a b\n", "a\n\nb\n", E),
    ("docs/x.md", "table reformat", "|a|b|\n|-|-|\n|1|2|\n", "| a | b |\n|-|-|\n| 1 | 2 |\n", R),
    ("docs/x.md", "table cell value", "|a|\n|-|\n|1|\n", "|a|\n|-|\n|2|\n", E),
]

SH = [
    ("run.sh", "comment", "# c\necho hi\n", "echo   hi  # x\n", R),
    ("run.sh", "arg change", "echo hi\n", "echo ho\n", E),
    ("run.sh", "flag change", "rm -f a\n", "rm -rf a\n", E),
    ("run.sh", "quote static word", "echo \"hi\"\n", "echo hi\n", R),
    ("run.sh", "single vs double quotes", "echo 'a b'\n", "echo \"a b\"\n", R),
    ("run.sh", "brace var", "echo $HOME\n", "echo ${HOME}\n", R),
    ("run.sh", "backticks", "d=`date`\n", "d=$(date)\n", R),
    ("run.sh", "unquoting variable", "rm \"$f\"\n", "rm $f\n", E),
    ("run.sh", "glob quoted", "ls *.txt\n", "ls '*.txt'\n", E),
    ("run.sh", "line continuation", "cmd a b\n", "cmd a \\\n  b\n", R),
    ("run.sh", "new command", "make\n", "make\nmake install\n", E),
    ("run.sh", "operator", "a && b\n", "a || b\n", E),
    ("run.sh", "redirect", "cmd > out\n", "cmd >> out\n", E),
    ("run.sh", "set -e added", "make\n", "set -e\nmake\n", E),
    ("run.sh", "if reformat", "if [ -f a ]; then echo y; fi\n", "if [ -f a ]; then\n  echo y\nfi\n", R),
    ("run.sh", "function reformat", "f() { echo a; }\n", "f() {\n  echo a\n}\n", R),
    ("run.sh", "variable value", "N=3\n", "N=4\n", E),
    ("deploy.bash", "env var", "export MODE=dev\n", "export MODE=prod\n", E),
    ("deploy.bash", "comment block", "make\n", "# build it\n# (slow)\nmake\n", R),
    ("deploy.bash", "pipe added", "cat f\n", "cat f | sort\n", E),
    ("run.sh", "test brackets", "[ -n \"$a\" ] && go\n", "[[ -n \"$a\" ]] && go\n", E),
    ("run.sh", "quoted path literal", "cd /tmp/x\n", "cd '/tmp/x'\n", R),
]


def rows() -> list[dict]:
    out = []
    for name, old, new, label in PY:
        out.append({"lang": "python", "path": "mod.py", "name": name, "old": old, "new": new, "label": label})
    for path, name, old, new, label in JS:
        out.append({"lang": "js/ts", "path": path, "name": name, "old": old, "new": new, "label": label})
    for path, name, old, new, label in DATA:
        out.append({"lang": "yaml/json/toml", "path": path, "name": name, "old": old, "new": new, "label": label})
    for path, name, old, new, label in MD:
        out.append({"lang": "markdown", "path": path, "name": name, "old": old, "new": new, "label": label})
    for path, name, old, new, label in SH:
        out.append({"lang": "shell", "path": path, "name": name, "old": old, "new": new, "label": label})
    return out


if __name__ == "__main__":
    dst = Path(__file__).with_name("corpus.jsonl")
    with open(dst, "w", encoding="utf-8") as fh:
        for r in rows():
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows())} pairs to {dst.name}")
