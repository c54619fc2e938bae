"""Interpreters: inline code is unknown unless it is seen to be destructive."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", ["python -c 'import os; os.system(\"ls\")'", "node -e 'require(\"fs\")'",
                                 "ruby -e 'File.write(\"x\", 1)'", "php -r 'unlink(\"x\");' ",
                                 "deno eval 'Deno.remove(\"x\")'", "python -c \"open('f','w').write('x')\"",
                                 "python3 script.py", "python -", "perl script.pl"])
def test_interpreters_unknown_or_worse(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


def test_inline_code_running_destructive_shell_is_destructive() -> None:
    assert analyze("python -c 'import os; os.system(\"rm -rf /\")'").kind == "destructive"
    assert analyze("node -e \"require('child_process').execSync('rm -rf /')\"").kind == "destructive"
