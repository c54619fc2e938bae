"""Real Landlock runs: the launcher restricts writes to the intent's scope; the kernel refuses the rest."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.sandbox import landlock, unwrap
from tests.sandbox.conftest import Host, needs_landlock

pytestmark = needs_landlock
LAUNCHER = landlock.__file__


def launch(args: list[str], command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--orch-sandbox", *args, "--", command], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_abi_is_detected() -> None:
    assert landlock.abi() >= 1
    assert landlock.write_rights(1) & landlock.REFER == 0
    assert landlock.write_rights(3) & landlock.TRUNCATE


def test_launcher_allows_writes_only_beneath_the_writable_paths(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f").write_text("old\n")
    code = (f"{sys.executable} -c \"import errno,sys\n"
            "try:\n open('out/new','w')\nexcept OSError as e: print(errno.errorcode[e.errno])\n\"; "
            "echo a > in/x && echo b > out/f; echo rc=$?; : > out/f; rm -f out/f; mkdir out/d; "
            "mv in/x out/x; ln -s /etc/passwd out/l; echo done")
    proc = launch(["-w", str(tmp_path / "in"), "-w", "/dev/null"], code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert lines[0] in ("EACCES", "EPERM")
    assert "rc=1" in lines and lines[-1] == "done"
    assert (tmp_path / "in" / "x").read_text() == "a\n"
    assert (tmp_path / "out" / "f").read_text() == "old\n"  # not overwritten, truncated or removed
    assert sorted(os.listdir(tmp_path / "out")) == ["f"]
    assert "Permission denied" in proc.stderr


def test_exit_code_and_output_pass_through(tmp_path: Path) -> None:
    proc = launch(["-w", str(tmp_path)], "echo out; echo err >&2; exit 7", tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (7, "out\n", "err\n")


def test_private_tmp_is_exported_and_writable(tmp_path: Path) -> None:
    private = tmp_path / "private"
    proc = launch(["--tmp", str(private)], 'echo x > "$TMPDIR/f" && echo "$TMPDIR" && echo "$ORCH_SANDBOXED"', tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(private), "1"]
    assert (private / "f").exists()


def test_usage_errors_do_not_run_the_command(tmp_path: Path) -> None:
    proc = launch(["-x", "y"], "touch ran", tmp_path)
    assert proc.returncode == landlock.EXIT_SETUP
    assert not (tmp_path / "ran").exists()
    proc = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "touch", "ran"], cwd=tmp_path, capture_output=True)
    assert proc.returncode == landlock.EXIT_SETUP and not (tmp_path / "ran").exists()


def test_restrict_in_process_refuses_with_eacces(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    script = (f"import sys; sys.path.insert(0, {str(Path(LAUNCHER).parent)!r}); import landlock, errno\n"
              f"landlock.restrict([{str(tmp_path / 'ok')!r}])\n"
              f"open({str(tmp_path / 'ok' / 'a')!r}, 'w').write('1')\n"
              f"try:\n    open({str(tmp_path / 'b')!r}, 'w')\nexcept OSError as e:\n    print(e.errno)\n")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) in (errno.EACCES, errno.EPERM)


# --------------------------------------------------------------------------- through the pipeline


def test_script_written_in_scope_cannot_write_outside(sws: Path) -> None:
    host = Host(sws)
    (sws / "src" / "evil.py").write_text(
        "open('outside/keep.txt', 'w').write('pwned')\n")
    proc = host.run("python3 src/evil.py")
    assert proc.verdict.sandbox["enabled"] is True
    assert proc.returncode != 0 and "Permission denied" in proc.stderr
    assert (sws / "outside" / "keep.txt").read_text() == "keep\n"


def test_in_scope_writes_succeed(sws: Path) -> None:
    host = Host(sws)
    proc = host.run("python3 -c \"open('src/gen.py','w').write('y = 2\\n')\" && mkdir -p build/out && "
                    "touch build/out/a")
    assert proc.returncode == 0, proc.stderr
    assert (sws / "src" / "gen.py").read_text() == "y = 2\n"
    assert (sws / "build" / "out" / "a").exists()  # build/ did not exist: created empty before the run


@pytest.mark.parametrize("target", [".orchestration/policy.yaml", ".orchestration/new", ".git/config",
                                    ".git/hooks/pre-commit", "AGENTS.md", ".mcp.json", ".claude/settings.json",
                                    "newfile-at-root"])
def test_governance_files_stay_unwritable_even_with_scope_everything(sws: Path, target: str) -> None:
    (sws / ".claude").mkdir(exist_ok=True)
    (sws / ".claude" / "other.md").write_text("x\n")
    host = Host(sws, intent="INT-ALL")
    before = (sws / target).read_bytes() if (sws / target).exists() else None
    code = f"import os; os.makedirs(os.path.dirname({target!r}) or '.', exist_ok=True); open({target!r}, 'a').write('x')"
    proc = host.run(f"python3 -c {code!r}")
    assert proc.verdict.sandbox["enabled"] is True
    assert proc.returncode != 0
    after = (sws / target).read_bytes() if (sws / target).exists() else None
    assert after == before
    # while the rest of the tree is writable under "**"
    ok = host.run("python3 -c \"open('src/app.py','a').write('# ok\\n'); open('.claude/other.md','a').write('y')\"")
    assert ok.returncode == 0, ok.stderr


def test_pytest_runs_inside_the_sandbox(sws: Path) -> None:
    (sws / "tests").mkdir()
    (sws / "tests" / "test_app.py").write_text(
        "import os\n\ndef test_ok(tmp_path):\n    (tmp_path / 'f').write_text('1')\n    assert 1 + 1 == 2\n\n"
        "def test_cannot_escape():\n    import pytest\n    with pytest.raises(PermissionError):\n"
        "        open('outside/keep.txt', 'w')\n")
    host = Host(sws)
    proc = host.run(f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert (sws / "outside" / "keep.txt").read_text() == "keep\n"


def test_a_build_runs_inside_the_sandbox(sws: Path) -> None:
    (sws / "src" / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    (sws / "Makefile").write_text("build/hello: src/hello.c\n\tmkdir -p build\n\tgcc -o $@ $<\n"
                                  "evil:\n\techo x > outside/keep.txt\n")
    host = Host(sws)
    proc = host.run("make build/hello && ./build/hello")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("hi")
    evil = host.run("make evil")
    assert evil.returncode != 0
    assert (sws / "outside" / "keep.txt").read_text() == "keep\n"


def test_git_hook_and_test_file_attacks_fail_on_disk(sws: Path) -> None:
    host = Host(sws)
    (sws / "tests").mkdir()
    (sws / "tests" / "test_x.py").write_text(
        "def test_x():\n    open('.git/hooks/post-commit', 'w').write('#!/bin/sh\\necho pwned\\n')\n")
    proc = host.run(f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    assert proc.returncode != 0
    assert not (sws / ".git" / "hooks" / "post-commit").exists()


def test_unwrap_recovers_the_original(sws: Path) -> None:
    host = Host(sws)
    original = "python3 tools/gen.py 'a b' \"$HOME\" && echo \"it's\" | wc -c # comment"
    verdict = host.pre(original, sandbox=True)
    assert unwrap(verdict.command) == original
    assert unwrap(original) is None
    assert unwrap(f"python3 -I -S {LAUNCHER} --orch-sandbox -- 'x' ; rm -rf /") is None


def test_secret_files_cannot_be_read_inside_the_sandbox(sws: Path) -> None:
    (sws / ".env").write_text("TOKEN=s3cret\n")
    (sws / "src" / "id_rsa").write_text("KEY\n")
    (sws / "src" / "leak.py").write_text(
        "import os\nprint(sorted(os.listdir('.'))[0]); print(open('src/app.py').read()[:1])\n"
        "for p in ('.env', 'src/id_rsa'):\n"
        "    try:\n        print(open(p).read())\n    except PermissionError:\n        print('denied', p)\n")
    host = Host(sws)
    proc = host.run("python3 src/leak.py")  # the analyzer cannot see the reads: the kernel refuses them
    assert {str(sws / ".env"), str(sws / "src" / "id_rsa")} <= set(proc.verdict.sandbox["deny_read"])
    assert proc.returncode == 0, proc.stderr
    # listing and other reads still work
    assert proc.stdout.splitlines() == [".env", "x", "denied .env", "denied src/id_rsa"]


def test_spec_file_keeps_the_command_short(sws: Path) -> None:
    from orchestrator import sandbox

    (sws / ".orchestration" / "policy.yaml").write_text("version: 1\n")  # /tmp writable: many grants
    host = Host(sws)
    verdict = host.pre("python3 tools/gen.py", sandbox=True)
    # the short form: the stub in the run dir, the spec's id, the command (issue 21 item 8: what hosts display)
    stub = str(sws / ".orchestration" / "run" / "sandbox" / "orch-sandbox")
    assert verdict.command.startswith(stub + " ") and verdict.command.endswith(" -- 'python3 tools/gen.py'")
    assert len(verdict.command) - len(stub) < 50
    assert sandbox.unwrap(verdict.command) == "python3 tools/gen.py"
    # a look-alike the agent typed is not unwrapped: the path must be a stub running this launcher
    fake = sws / "x" / ".orchestration" / "run" / "sandbox" / "orch-sandbox"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    assert sandbox.unwrap(f"{fake} abc -- 'rm -rf src'") is None


def test_workspace_under_a_writable_tmp_stays_governed_even_through_links(sws: Path) -> None:
    (sws / ".orchestration" / "policy.yaml").write_text("version: 1\n")  # default: /tmp writable
    scratch = sws.parent / "scratch"
    scratch.mkdir()
    os.symlink(sws, sws.parent / "alias")  # like pytest's `pytest-current` link to its run directory
    host = Host(sws)
    proc = host.run(f"python3 -c \"open('{sws.parent}/alias/outside/keep.txt', 'w').write('x')\"; "
                    f"python3 -c \"open('{scratch}/x', 'w').write('1')\"; "
                    "python3 -c \"import os; open(os.environ['TMPDIR'] + '/ok', 'w').write('1')\" && echo tmp-ok")
    assert proc.verdict.sandbox["enabled"] is True
    # /tmp holds the workspace: it is not granted (a sibling like ../scratch would escape); the private TMPDIR is
    assert proc.stdout.strip() == "tmp-ok"
    assert proc.stderr.count("PermissionError") == 2
    assert (sws / "outside" / "keep.txt").read_text() == "keep\n"
    assert not (scratch / "x").exists()
    assert host.pre(f"echo x > {scratch}/y", sandbox=True).error["type"] == "path-outside-workspace"


def test_python_reads_existing_bytecode_and_skips_refused_writes_silently(sws: Path) -> None:
    # no PYTHONPYCACHEPREFIX by default: a prefix made every session recompile all it imported (site-packages too)
    (sws / "src").mkdir(exist_ok=True)
    (sws / "src" / "inmod.py").write_text("X = 1\n")
    (sws / "outside" / "outmod.py").write_text("Y = 2\n")
    script = ("import sys; sys.path[:0] = ['src', 'outside']; import inmod, outmod; "
              "print(sys.pycache_prefix, inmod.X + outmod.Y)")
    # empty values count as unset for Python (this environment sets PYTHONDONTWRITEBYTECODE)
    proc = Host(sws).run(f"{sys.executable} -c \"{script}\"", env={"PYTHONDONTWRITEBYTECODE": ""})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", "3"] and proc.stderr == ""
    assert list((sws / "src" / "__pycache__").glob("inmod.*.pyc"))  # in scope: written beside the source
    assert not (sws / "outside" / "__pycache__").exists()  # refused by the kernel, skipped without a word


def test_ledger_signing_key_cannot_be_read_inside_the_sandbox(sws: Path) -> None:
    """The private key lives outside the workspace (orchestrator/state/keys.py) and is a secret: `cat` of it is refused
    by the read hooks; a script the analyzer cannot see through is refused by the kernel; the .pub half stays
    readable."""
    from orchestrator.state import keys
    from orchestrator.ledger import signing

    signing.local_signer()  # created on first use
    key = keys.private_key_path()
    assert key.exists() and not str(key).startswith(str(sws))
    host = Host(sws)
    verdict = host.pre(f"cat {key}", sandbox=True)
    assert not verdict.allowed and verdict.error is not None and verdict.error["type"] == "secret-read", verdict
    (sws / "src" / "peek.py").write_text(
        f"k = {str(key)!r}\n"  # in the script: the analyzer does not read it (and K=... is not inherited)
        "for p in (k, k[:-4] + '.pub'):\n"
        "    try:\n        print('read', len(open(p).read()) > 0)\n"
        "    except PermissionError:\n        print('denied')\n")
    proc = host.run("python3 src/peek.py")
    assert str(key) in proc.verdict.sandbox["deny_read"]
    assert proc.stdout.splitlines() == ["denied", "read True"], proc.stderr
    proc = host.run('sh -c "cat $PIP_CONFIG_FILE"', env={"PIP_CONFIG_FILE": str(key)})  # a name it inherits
    assert proc.returncode != 0 and "BEGIN" not in proc.stdout and "Permission denied" in proc.stderr
