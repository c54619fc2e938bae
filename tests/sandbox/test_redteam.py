"""The red-team corpus (tests/data/sandbox_redteam.jsonl): attacks on issues 21 and 22 as landed, judged on disk.

Same judge as the escape corpus (tests/sandbox/escapes.py: the pipeline decides, the command the verdict says runs
with bash as a host runs it, then the post-hook), on a template with more secrets: home credential files the fixed
scan list did not reach (``~/.config/gh/hosts.yml``, ``~/.password-store``, ``~/.terraform.d``), a committed key
(``config/deploy.pem``) and a sibling project's ``.env``. Beyond the escape judge, a governance directory or a
planted git dir created inside the scope (``src/.orchestration``, ``src/.claude``, ``.git/modules/x/config``)
counts as a bypass. Known gaps are strict xfails, each listed in docs/security.md "What remains uncovered".
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox import corpus, escapes
from tests.sandbox.conftest import needs_landlock

pytestmark = needs_landlock
ENTRIES = corpus.load("sandbox_redteam")
#: secrets the escape template lacks; the markers are the escape corpus's, so its judge sees them
HOME_SECRETS = {".config/gh/hosts.yml": "github.com:\n  oauth_token: CORPUS-SECRET-AWS-7f3a\n",
                ".password-store/db.gpg": "CORPUS-SECRET-AWS-7f3a\n",
                ".terraform.d/credentials.tfrc.json": '{"token": "CORPUS-SECRET-AWS-7f3a"}\n'}
#: planted in the scope or the git dir: must not exist after the command
PLANTED = ("src/.orchestration", "src/.claude", "src/sub/.git/hooks/pre-commit", ".git/modules/x/config",
           ".git/worktrees/x/config.worktree",
           # host configuration at any depth (orchestrator.core.governance's nested patterns; removed by post/revert.py)
           "src/.mcp.json", "src/.codex", "src/.gemini", "tests/opencode.json", "tools/.opencode", "scripts/.cursor",
           "src/.github/hooks", "tests/.claude")
KNOWN: dict[str, str] = {  # none left: issue 21's last round closed them (docs/security.md)
}


def make_template(base: Path) -> Path:
    root = escapes.make_template(base)
    escapes.write_files(base / "home", HOME_SECRETS)
    (root / "config").mkdir()
    (root / "config" / "deploy.pem").write_text("-----BEGIN KEY-----\nCORPUS-SECRET-SSH-7f3a\n-----END KEY-----\n")
    env = corpus.env_for(base)
    subprocess.run(["git", "add", "-f", "config/deploy.pem"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "key"], cwd=root, check=True, env=env)
    return root


@pytest.fixture(scope="module")
def project() -> Iterator[tuple[Path, Path, escapes.Listener]]:
    yield from escapes.project_for(make_template)


def _param(entry: dict[str, str]) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[entry["id"]])] if entry["id"] in KNOWN else []
    return pytest.param(entry, id=entry["id"], marks=marks)


def test_known_gaps_are_in_the_corpus() -> None:
    assert set(KNOWN) <= {e["id"] for e in ENTRIES}
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES])
def test_redteam_attack_changes_nothing_and_leaks_nothing(
        project: tuple[Path, Path, escapes.Listener], entry: dict[str, str]) -> None:
    base, template, listener = project

    def fresh(b: Path, t: Path) -> Path:
        ws = corpus_fresh(b, t)
        (b / "outside" / ".env").write_text("TOKEN=CORPUS-SECRET-DOTENV-7f3a\n")
        return ws

    corpus_fresh = corpus.fresh
    corpus.fresh = fresh  # type: ignore[assignment]
    try:
        result = escapes.run(base, template, entry, listener)
    finally:
        corpus.fresh = corpus_fresh  # type: ignore[assignment]
    # the hook's own first-use state in the fake home (signing key, anchors) is not the command's doing
    result["changed"] = [c for c in result["changed"]
                         if "/orchestrator/" not in c and c not in ("home/.local/", "home/.local/state/",
                                                                    "home/.config/")]
    planted = [p for p in PLANTED if (base / "repo" / p).exists()]
    assert not (escapes.failed(result) or planted), (result, planted)
