"""The sandboxed command's environment: an allow-list, and no credential-shaped value (issue 28, finding 4).

Each case runs a real command that prints its environment through BOTH launchers (the compiled one and the Python
one), on the same spec: they must agree with each other and with :mod:`orchestrator.sandbox.envpolicy` (the one
source of the lists: the C side gets them as a generated header). The red team's leftovers come first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.sandbox import compiled, envpolicy
from tests.sandbox.conftest import Host, needs_landlock

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

#: what the second held-out red team's script posted from os.environ (issue 28, finding 4), with values of the
#: shapes it found
RED_TEAM = {
    "ORCH_OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otlp-secret-1234",
    "ANTHROPIC_CUSTOM_HEADERS": "X-Api-Key: custom-secret-1234",
    "SYSTEM_ACCESSTOKEN": "azure-pipelines-secret",
    "NGROK_AUTHTOKEN": "2abcNgrokSecret_1234567890",
    "OP_SESSION_my_account": "onepassword-session-secret",
    "BUNDLE_GITHUB__COM": "x-access-token:bundler-secret",
    "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraheader",
    "GIT_CONFIG_VALUE_0": "AUTHORIZATION: basic Z2l0LWNvbmZpZy1zZWNyZXQ=",
    "HTTPS_PROXY": "http://proxytoken-secret@proxy.example:3128",
}

#: (value, what it is or None): through PIP_V<i> (a name on the allow-list), so only the value decides
VALUES: list[tuple[str, str | None]] = [
    ("http://TOKEN@proxy:3128", "URL user-info"), ("http://u:p@proxy", "URL user-info"),
    ("redis://:pw@cache:6379/0", "URL user-info"), ("u:pw@proxy.example:3128", "URL user-info"),
    ("https://a.example/x,https://t0k3n@b.example/", "URL user-info"),
    ("ghp_" + "a1" * 18, "GitHub token"), ("token ghp_" + "A1" * 18, "GitHub token"),
    ("x-access-token:ghs_" + "Z" * 36, "GitHub token"), ("github_pat_" + "x_" * 15, "GitHub token"),
    ("glpat-" + "x" * 20, "GitLab token"), ("xoxb-1234-5678-abcdefgh", "Slack token"),
    ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"), ("ASIA" + "Q" * 16, "AWS access key id"),
    ("sk-proj-" + "a" * 40, "API key (sk-)"), ("sk-ant-api03-" + "b" * 40, "API key (sk-)"),
    ("npm_" + "c" * 36, "npm token"), ("hf_" + "d" * 34, "Hugging Face token"), ("AIza" + "e" * 35, "Google API key"),
    ("pypi-AgEIcHlwaS5vcmc" + "f" * 60, "PyPI token"), ("dckr_pat_" + "g" * 27, "Docker Hub token"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2ln", "JWT"),
    ("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", "JWT"),
    ("Authorization=Bearer abc", "credential header"), ("X-Api-Key: abc", "credential header"),
    ('{"authorization": "x"}', "credential header"), ("Cookie: a=b", "credential header"),
    ("PRIVATE-TOKEN=abc", "credential header"), ("access-tokens = gitlab.com=PAT:abc", "credential header"),
    ("-Xmx1g -Dsonar.password=abc", "credential header"), ("client_secret: abc", "credential header"), ("Bearer abcdefghijklmnop", "Bearer/Basic credential"),
    ("basic dXNlcjpwYXNzd29yZA==", "Bearer/Basic credential"),
    ("https://x.example/y?access_token=abc", "credential in a URL query"),
    ("https://x.example/y?a=1&sig=abc", "credential in a URL query"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----", "PEM block"),
    ("\u0130\u0130?token=abc", "credential in a URL query"),  # İ lowers to two characters in Python: ASCII only
    ("\udcff" + "ghp_" + "b" * 36, "GitHub token"),  # an undecodable byte before it
    # kept: what builds have in these variables
    ("http://proxy.example:3128", None), ("https://example.com:8443/a@b", None), ("git@github.com:o/r.git", None),
    ("ssh://git@github.com/o/r.git", None), ("/usr/local/bin:/usr/bin:/bin", None), ("a@b.example", None),
    ("task-abcdefghijklmnopqrstuvwxyz", None), ("ghp_short", None), ("AKIAshort", None), ("--max-old-space-size=4096", None),
    ("https://pypi.org/simple", None), ("https://proxy.golang.org,direct", None), ("monkey=1", None),
    ("https://x.example/?keyboard=1", None), ("https://x.example/?token=", None), ("basic", None), ("Bearer x", None),
    ("eyJhbGciOi", None), ("cookiecutter", None), ("value with spaces", None), ("", None), ("h\u00e9llo w\u00f6rld", None),
    ("/home/u/.venv/lib/python3.11/site-packages", None), ("C.UTF-8", None), ("xterm-256color", None),
]


def test_the_value_shapes() -> None:
    assert [(v, envpolicy.credential(v)) for v, _ in VALUES] == VALUES


@pytest.fixture(scope="module")
def launchers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sandbox dir with both launchers: orch-sandbox (compiled) and orch-sandbox-python."""
    directory = tmp_path_factory.mktemp("envpolicy") / "sandbox"
    assert compiled.install(str(directory)) is not None
    assert compiled.state(str(directory))[0] == "compiled"
    return directory


def seen(directory: Path, opts: list[str], env: dict[str, str]) -> dict[str, dict[str, str]]:
    """kind -> the environment a command saw (``env -0``), through each launcher with these options."""
    spec = os.path.basename(compiled.write_spec(str(directory), ["-w", "/dev/null", *opts]))[:-len(".spec")]
    out = {}
    for kind, stub in (("compiled", compiled.STUB), ("python", compiled.PYTHON_STUB)):
        proc = subprocess.run([str(directory / stub), spec, "--", "env -0"], capture_output=True, timeout=60,
                              env={k: v.encode("utf-8", "surrogateescape") for k, v in env.items()})
        assert proc.returncode == 0, (kind, proc.stderr)
        pairs = (e.decode("utf-8", "surrogateescape").split("=", 1) for e in proc.stdout.split(b"\0") if e)
        out[kind] = {k: v for k, v in pairs if k not in ("PWD", "SHLVL", "_")}  # bash's own
    return out


BASE = {"PATH": os.environ["PATH"], "HOME": "/nonexistent-home", "LANG": "C.UTF-8"}


def expected(env: dict[str, str], keep: list[str] = (), scrub: list[str] | None = None) -> dict[str, str]:
    rule = envpolicy.Rule(keep, scrub)
    return {**{k: v for k, v in env.items() if rule.reason(k, v) is None}, "ORCH_SANDBOXED": "1"}


@needs_landlock
@needs_cc
def test_the_red_teams_variables_reach_no_command(launchers: Path) -> None:
    env = {**BASE, **RED_TEAM}
    got = seen(launchers, [], env)
    assert got["compiled"] == got["python"] == {**BASE, "ORCH_SANDBOXED": "1"}
    reasons = envpolicy.dropped(env)
    assert reasons["HTTPS_PROXY"] == "value looks like a credential (URL user-info)"  # on the allow-list, by value
    assert all(reasons[name] == "not on the allow-list" for name in RED_TEAM if name != "HTTPS_PROXY")
    # even where a person keeps the names by a glob, the values are caught
    keep = ["ORCH_*", "ANTHROPIC_*", "SYSTEM_*", "NGROK_*", "OP_*", "BUNDLE_*", "GIT_CONFIG_*"]
    got = seen(launchers, [a for k in keep for a in ("--env-keep", k)], env)
    assert got["compiled"] == got["python"] == expected(env, keep)
    assert not set(got["compiled"]) & {"ORCH_OTEL_EXPORTER_OTLP_HEADERS", "ANTHROPIC_CUSTOM_HEADERS",
                                       "GIT_CONFIG_VALUE_0", "HTTPS_PROXY", "SYSTEM_ACCESSTOKEN", "NGROK_AUTHTOKEN",
                                       "OP_SESSION_my_account"}


@needs_landlock
@needs_cc
def test_both_launchers_judge_every_value_alike(launchers: Path) -> None:
    env = {**BASE, **{f"PIP_V{i:02d}": v for i, (v, _) in enumerate(VALUES)}}
    got = seen(launchers, [], env)
    kept = {f"PIP_V{i:02d}": v for i, (v, what) in enumerate(VALUES) if what is None}
    assert got["python"] == {**BASE, **kept, "ORCH_SANDBOXED": "1"}
    assert got["compiled"] == got["python"]


#: names only: which are inherited with harmless values (the allow-list, the core, the scrub patterns on kept names)
NAMES = {"PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1", "TERM": "xterm", "LC_ALL": "C",
         "XDG_CACHE_HOME": "/c", "VIRTUAL_ENV": "/v", "CONDA_PREFIX": "/c", "PYENV_ROOT": "/p", "NVM_DIR": "/n",
         "GOPATH": "/g", "GOFLAGS": "-mod=mod", "CARGO_HOME": "/c", "RUSTUP_HOME": "/r", "JAVA_HOME": "/j",
         "CI": "true", "GITHUB_ACTIONS": "true", "REQUESTS_CA_BUNDLE": "/etc/ssl/ca.pem", "NODE_EXTRA_CA_CERTS": "/x",
         "npm_config_cache": "/n", "GIT_AUTHOR_NAME": "A", "EDITOR": "vi", "TZ": "UTC", "CLAUDECODE": "1",
         # on the allow-list by a glob, dropped by a name pattern
         "CARGO_REGISTRY_TOKEN": "t", "POETRY_PYPI_TOKEN_PYPI": "t", "PIP_PASSWORD": "p",
         "npm_config_//registry.npmjs.org/:_authToken": "t", "CONDA_API_KEY": "k",
         # not on it
         "GITHUB_TOKEN": "t", "ANTHROPIC_API_KEY": "k", "MY_SETTING": "x", "DIRENV_DIFF": "x", "GIT_ASKPASS": "/x",
         "LD_PRELOAD": "/x.so", "DISPLAY": ":0", "ORCH_APPROVAL_CHANNEL": "tui"}


@needs_landlock
@needs_cc
@pytest.mark.parametrize("opts, keep, scrub", [
    ([], [], None),
    # the person keeps a name exactly: it passes as it is, a token in it included; a glob keeps names, not values
    (["--env-keep", "GITHUB_TOKEN", "--env-keep", "MY_*", "--env-keep", "CONDA_API_KEY"],
     ["GITHUB_TOKEN", "MY_*", "CONDA_API_KEY"], None),
    # the policy's own name patterns replace the built-in ones (core names exempt)
    (["--env-scrub", "*_HOME", "--env-scrub", "SSH_*"], [], ["*_HOME", "SSH_*"]),
    # no name pattern at all, every name kept: still no credential-shaped value
    (["--env-scrub", "", "--env-keep", "*"], ["*"], []),
], ids=["default", "keep", "own-scrub", "keep-all"])
def test_names_through_both_launchers(launchers: Path, opts: list[str], keep: list[str],
                                      scrub: list[str] | None) -> None:
    env = {**BASE, **NAMES, "GITHUB_TOKEN": "ghp_" + "q" * 36, "MY_URL": "https://u:p@h.example/"}
    got = seen(launchers, opts, env)
    assert got["compiled"] == got["python"] == expected(env, keep, scrub)
    names = set(got["compiled"])
    if not opts:
        assert {"SSH_AUTH_SOCK", "LC_ALL", "CONDA_PREFIX", "GOFLAGS", "npm_config_cache", "CLAUDECODE"} <= names
        assert not names & {"CARGO_REGISTRY_TOKEN", "POETRY_PYPI_TOKEN_PYPI", "PIP_PASSWORD", "CONDA_API_KEY",
                            "npm_config_//registry.npmjs.org/:_authToken", "GITHUB_TOKEN", "MY_SETTING",
                            "LD_PRELOAD", "GIT_ASKPASS", "ORCH_APPROVAL_CHANNEL"}
    elif keep and keep[0] == "GITHUB_TOKEN":
        assert got["compiled"]["GITHUB_TOKEN"].startswith("ghp_") and "MY_URL" not in names
        assert {"MY_SETTING", "CONDA_API_KEY"} <= names
    elif scrub:
        assert "SSH_AUTH_SOCK" in names and "XDG_CACHE_HOME" not in names and "CARGO_REGISTRY_TOKEN" in names
    else:
        assert "ANTHROPIC_API_KEY" in names and "GITHUB_TOKEN" not in names and "MY_URL" not in names


@needs_landlock
@needs_cc
def test_the_launchers_own_variables_win_over_the_agents(launchers: Path, tmp_path: Path) -> None:
    env = {**BASE, "ORCH_SANDBOXED": "0", "TMPDIR": "/agent/tmp"}
    got = seen(launchers, ["--tmp", str(tmp_path / "t")], env)
    assert got["compiled"] == got["python"]
    assert got["compiled"]["ORCH_SANDBOXED"] == "1" and got["compiled"]["TMPDIR"] == str(tmp_path / "t")


def test_the_generated_header_holds_every_list(monkeypatch: pytest.MonkeyPatch) -> None:
    header = envpolicy.c_header()
    for name in ("ENV_CORE", "ENV_ALLOW", "SECRET_ENV", "TOKEN_SHAPES", "HEADER_NAMES", "AUTH_SCHEMES", "QUERY_NAMES",
                 "URL_USERS_OK"):
        assert f" {name}[] = {{" in header
    for entry in (*envpolicy.ENV_ALLOW, *envpolicy.SECRET_ENV, *(p for p, *_ in envpolicy.TOKEN_SHAPES)):
        assert f'"{entry}"' in header
    monkeypatch.setattr(envpolicy, "ENV_ALLOW", ('A"B',))  # never a C string that could end early
    with pytest.raises(ValueError):
        envpolicy.c_header()


@needs_landlock
def test_a_command_through_the_engine_keeps_what_the_policy_keeps(sws: Path) -> None:
    (sws / ".orchestration" / "policy.yaml").write_text(
        "version: 1\nsandbox:\n  writable: ['{tmp}']\n  env_keep: [NPM_TOKEN, 'MY_*']\n")
    proc = Host(sws).run("env", env={"NPM_TOKEN": "npm_" + "n" * 36, "MY_THING": "m-3", "MY_URL": "https://t@h/",
                                     "GH_TOKEN": "gh-2", "OTHER": "o-4", "HTTPS_PROXY": "http://tok@proxy:1"})
    assert "NPM_TOKEN=npm_" in proc.stdout and "MY_THING=m-3" in proc.stdout  # kept exactly / by a glob
    for value in ("gh-2", "o-4", "https://t@h/", "tok@proxy"):
        assert value not in proc.stdout
    assert "PATH=" in proc.stdout and "ORCH_SANDBOXED=1" in proc.stdout


@needs_landlock
def test_explain_names_what_is_dropped_and_why_never_the_value(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **RED_TEAM,
           "PIP_INDEX_URL": "https://user:pypi-secret@pypi.example/simple", "CONDA_TOKEN": "conda-secret"}
    env.pop("ORCH_APPROVAL_CHANNEL", None)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([sys.executable, "-m", "orchestrator", "init"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    r = subprocess.run([sys.executable, "-m", "orchestrator", "explain", "ls"], cwd=tmp_path, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "not on the allow-list" in out and "ORCH_OTEL_EXPORTER_OTLP_HEADERS" in out and "NGROK_AUTHTOKEN" in out
    assert "HTTPS_PROXY (URL user-info)" in out and "PIP_INDEX_URL (URL user-info)" in out
    assert "CONDA_TOKEN (*_TOKEN)" in out
    for value in [v for v in RED_TEAM.values() if len(v) > 4] + ["pypi-secret", "conda-secret"]:
        assert value not in out and value not in r.stderr


def test_dropped_env_follows_the_policy() -> None:
    from orchestrator.config.schema import Policy

    policy = Policy.model_validate({"version": 1, "sandbox": {"env_keep": ["MY_*", "EXACT"], "env_scrub": ["*_X"]}})
    got = envpolicy.dropped_by(policy, {"MY_A": "1", "MY_B_X": "2", "EXACT": "ghp_" + "e" * 36, "OTHER": "3",
                                       "MY_C": "Bearer abcdefghijkl", "PATH": "/bin"})
    assert got == {"MY_B_X": "name matches sandbox.env_scrub pattern *_X", "OTHER": "not on the allow-list",
                   "MY_C": "value looks like a credential (Bearer/Basic credential)"}


def _wheel(directory: Path) -> Path:
    """A minimal wheel (``demo_pkg`` 1.0) built by hand: no network, no build backend."""
    import zipfile

    path = directory / "demo_pkg-1.0-py3-none-any.whl"
    files = {"demo_pkg.py": "VALUE = 42\n",
             "demo_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n",
             "demo_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                             "Tag: py3-none-any\n"}
    files["demo_pkg-1.0.dist-info/RECORD"] = "".join(f"{name},,\n" for name in files) + \
        "demo_pkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


@needs_landlock
def test_package_managers_work_with_the_allow_list(sws: Path, tmp_path: Path) -> None:
    """A real `pip install` and `npm install` inside the sandbox, with an agent's environment around them: what
    they need is on the allow-list (HOME, PATH, PIP_*, npm_config_*...), the tokens beside them are not. (An install
    asks a person — it may run package code —: the channel here says yes.)"""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels)
    env = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "npm_config_fund": "false",
           "npm_config_audit": "false", "npm_config_update_notifier": "false", "GITHUB_TOKEN": "ghp_" + "t" * 36,
           "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40}
    proc = Host(sws, channel="allow").run(f"{sys.executable} -m pip install -q --no-index --find-links {wheels} --target build/site "
                         "demo-pkg && PYTHONPATH=build/site python3 -c 'import demo_pkg; print(demo_pkg.VALUE)'",
                         env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "42", proc.stderr
    if shutil.which("npm") is None:
        return
    pkg = tmp_path / "npmpkg"
    pkg.mkdir()
    (pkg / "package.json").write_text('{"name": "demo-npm", "version": "1.0.0", "main": "index.js"}\n')
    (pkg / "index.js").write_text("module.exports = 7;\n")
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(tmp_path)], cwd=pkg, check=True,
                   capture_output=True, timeout=120)
    (sws / "build").mkdir(exist_ok=True)
    (sws / "build" / "package.json").write_text('{"name": "app", "version": "1.0.0", "private": true}\n')
    proc = Host(sws, channel="allow").run(f"cd build && npm install --offline --cache \"$TMPDIR/npm\" {tmp_path / 'demo-npm-1.0.0.tgz'}"
                         " && node -e \"console.log(require('demo-npm'))\"", env=env)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("7"), proc.stderr
