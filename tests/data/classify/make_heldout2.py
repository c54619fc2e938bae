"""Write heldout2.jsonl: a third labelled set, written after the fixes prompted by heldout.jsonl and measured once,
with the classifier unchanged afterwards (figures in docs/ledger.md §3)."""

from __future__ import annotations

import json
from pathlib import Path

R, E = "R", "E"

ROWS = [
    ("python", "k.py", "rename loop index consistently", "def f(xs):\n    for i, x in enumerate(xs):\n        print(i, x)\n", "def f(xs):\n    for n, x in enumerate(xs):\n        print(n, x)\n", R),
    ("python", "k.py", "range bound changed", "for i in range(10):\n    go(i)\n", "for i in range(11):\n    go(i)\n", E),
    ("python", "k.py", "parenthesised condition", "if (a and b):\n    go()\n", "if a and b:\n    go()\n", R),
    ("python", "k.py", "dict literal key rename", "cfg = {'host': h}\n", "cfg = {'hostname': h}\n", E),
    ("python", "k.py", "extract guard variable", "def f(n):\n    if n % 2 == 0:\n        return 'even'\n    return 'odd'\n", "def f(n):\n    is_even = n % 2 == 0\n    if is_even:\n        return 'even'\n    return 'odd'\n", R),
    ("python", "k.py", "optional hint", "def f(x=None):\n    return x\n", "from typing import Optional\n\n\ndef f(x: Optional[int] = None) -> Optional[int]:\n    return x\n", R),
    ("python", "k.py", "logging level", "log.info('x')\n", "log.debug('x')\n", E),
    ("python", "k.py", "import from reorder multi-line", "from os.path import (\n    join,\n    exists,\n)\n", "from os.path import exists, join\n", R),
    ("python", "k.py", "class docstring and comment", "class A:\n    x = 1\n", "class A:\n    \"\"\"An A.\"\"\"\n\n    # the x\n    x = 1\n", R),
    ("python", "k.py", "early return refactor", "def f(x):\n    if x:\n        return 1\n    else:\n        return 2\n", "def f(x):\n    if x:\n        return 1\n    return 2\n", R),
    ("python", "k.py", "exception message", "raise ValueError('bad')\n", "raise ValueError('invalid')\n", E),
    ("python", "k.py", "rename module-level helper and caller", "def _norm(s):\n    return s.strip()\n\n\ndef clean(v):\n    return _norm(v).lower()\n", "def _strip(s):\n    return s.strip()\n\n\ndef clean(v):\n    return _strip(v).lower()\n", R),
    ("python", "k.py", "kwarg to external call renamed", "requests.get(url, timeout=t)\n", "requests.get(url, deadline=t)\n", E),
    ("python", "k.py", "return annotation only", "async def f():\n    return 1\n", "async def f() -> int:\n    return 1\n", R),
    ("js/ts", "k.js", "rename inner function", "function outer() {\n  function helper(v) { return v + 1; }\n  return helper(2);\n}\n", "function outer() {\n  function inc(v) { return v + 1; }\n  return inc(2);\n}\n", R),
    ("js/ts", "k.js", "method call changed", "arr.push(x);\n", "arr.unshift(x);\n", E),
    ("js/ts", "k.js", "double to single quotes in import", 'import x from "x";\n', "import x from 'x';\n", R),
    ("js/ts", "k.js", "var to let in block", "for (var i = 0; i < n; i++) { go(i); }\n", "for (let i = 0; i < n; i++) { go(i); }\n", E),
    ("js/ts", "k.ts", "type param added to function", "function id(x) { return x; }\n", "function id<T>(x: T): T { return x; }\n", R),
    ("js/ts", "k.ts", "interface field renamed", "interface P { name: string }\nlet p = 1;\n", "interface P { title: string }\nlet p = 1;\n", R),
    ("js/ts", "k.js", "timeout value", "setTimeout(go, 100);\n", "setTimeout(go, 200);\n", E),
    ("js/ts", "k.js", "comment inside template expression", "const s = `${a /* x */}`;\n", "const s = `${a}`;\n", R),
    ("js/ts", "k.jsx", "jsx text changed", "const A = () => <p>Hello</p>;\n", "const A = () => <p>Hi</p>;\n", E),
    ("js/ts", "k.js", "export list reorder", "export { b, a };\n", "export { a, b };\n", R),
    ("yaml/json/toml", "k.yaml", "gh actions on reorder", "on:\n  push: {}\n  pull_request: {}\n", "on:\n  pull_request: {}\n  push: {}\n", R),
    ("yaml/json/toml", "k.yaml", "env var quoted number", "env:\n  PORT: 8080\n", "env:\n  PORT: \"8080\"\n", E),
    ("yaml/json/toml", "k.yaml", "list item indentation style", "a:\n- x\n- y\n", "a:\n  - x\n  - y\n", R),
    ("yaml/json/toml", "k.json", "nested key reorder", '{"a": {"x": 1, "y": 2}}\n', '{"a": {"y": 2, "x": 1}}\n', R),
    ("yaml/json/toml", "k.json", "boolean flipped", '{"strict": true}\n', '{"strict": false}\n', E),
    ("yaml/json/toml", "k.toml", "array reformat", "x = [1,2,3]\n", "x = [\n  1,\n  2,\n  3,\n]\n", R),
    ("yaml/json/toml", "k.toml", "key moved between tables", "[a]\nk = 1\n[b]\nj = 2\n", "[a]\n[b]\nj = 2\nk = 1\n", E),
    ("yaml/json/toml", "k.yml", "null spelled differently", "a: null\n", "a: ~\n", R),
    ("markdown", "k.md", "numbered list renumbered", "3. a\n4. b\n", "1. a\n2. b\n", R),
    ("markdown", "k.md", "link text changed", "[guide](g.md)\n", "[manual](g.md)\n", E),
    ("markdown", "k.md", "heading text changed", "## Install\n", "## Installation\n", E),
    ("markdown", "k.md", "paragraph rewrapped longer", "one two\nthree four\nfive\n", "one two three\nfour five\n", R),
    ("markdown", "k.md", "inline code changed", "Run `make`.\n", "Run `make all`.\n", E),
    ("markdown", "k.md", "plus bullets", "+ a\n+ b\n", "* a\n* b\n", R),
    ("shell", "k.sh", "rename of local var", "n=3\necho $n\n", "count=3\necho $count\n", R),
    ("shell", "k.sh", "added quotes around var", "echo $x\n", "echo \"$x\"\n", E),
    ("shell", "k.sh", "if to and-list (exit status differs)", "if [ -f a ]; then rm a; fi\n", "[ -f a ] && rm a\n", E),
    ("shell", "k.sh", "path changed", "cp a /opt/x\n", "cp a /opt/y\n", E),
    ("shell", "k.sh", "double bracket spacing", "[[ -n $a ]]\n", "[[  -n $a  ]]\n", R),
    ("shell", "k.sh", "function keyword", "function f { echo a; }\n", "f() { echo a; }\n", R),
    ("shell", "k.sh", "curl flag", "curl -s url\n", "curl -sS url\n", E),
]


if __name__ == "__main__":
    dst = Path(__file__).with_name("heldout2.jsonl")
    with open(dst, "w", encoding="utf-8") as fh:
        for lang, path, name, old, new, label in ROWS:
            fh.write(json.dumps({"lang": lang, "path": path, "name": name, "old": old, "new": new, "label": label},
                                ensure_ascii=False) + "\n")
    print(f"wrote {len(ROWS)} pairs to {dst.name}")
