"""The secret-file matcher: pattern syntax, allow list, home paths, and the spec handed to a sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.secrets import patterns as secrets
from tests.conftest import make_workspace


@pytest.fixture
def m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> secrets.SecretMatcher:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return secrets.matcher()


@pytest.mark.parametrize("path,pattern", [
    (".env", ".env"), ("sub/dir/.env.local", ".env.*"), ("prod.env", "*.env"), ("a/server.PEM", "*.pem"),
    ("~/.ssh/id_rsa", "id_rsa*"), ("~/.ssh/deploy_key", "~/.ssh/*"), ("~/.aws/credentials", "~/.aws/credentials"),
    ("~/.config/gcloud/legacy_credentials/me/adc.json", "~/.config/gcloud/**"), ("$HOME/.kube/config", "~/.kube/config"),
    ("x/terraform.tfstate", "*.tfstate"),
])
def test_secret(m: secrets.SecretMatcher, path: str, pattern: str) -> None:
    assert m.match(path, "/repo") == pattern


@pytest.mark.parametrize("path", [".env.example", ".env.sample", ".env.template", "~/.ssh/id_rsa.pub",
                                  "~/.ssh/known_hosts", "~/.ssh/config", "src/env.py", "environment.yml",
                                  "README.md", ".npmrc", "docs/secrets.md", "~/.aws/config"])
def test_not_secret(m: secrets.SecretMatcher, path: str) -> None:
    assert m.match(path, "/repo") is None


def test_root_anchored_and_directory_patterns(tmp_path: Path) -> None:
    m = secrets.matcher(["config/settings.ini", "vault/"], ["config/dev.env"])
    assert m.match("/repo/config/settings.ini", "/repo") == "config/settings.ini"
    assert m.match("/repo/other/config/settings.ini", "/repo") is None  # anchored at the root
    assert m.match("/repo/vault/a/b.txt", "/repo") == "vault/"
    assert m.match("/repo/config/dev.env", "/repo") is None
    assert secrets.matcher(defaults=False).match(".env") is None


def test_holds_secrets(m: secrets.SecretMatcher) -> None:
    assert m.holds_secrets("~") is not None
    assert m.holds_secrets("~/.ssh") == "~/.ssh/*"
    assert m.holds_secrets("/repo/src", "/repo") is None


def test_secret_spec_lists_existing_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    root = make_workspace(tmp_path / "repo")
    monkeypatch.setenv("ORCH_KEY_DIR", str(tmp_path / "no-key-yet"))  # (the signing key is another test's)
    for p in (root / ".env", root / ".env.example", root / "k" / "tls.key", home / ".ssh" / "id_ed25519",
              home / ".ssh" / "id_ed25519.pub"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x", encoding="utf-8")
    spec = secrets.secret_spec(root, None)
    assert ".env" in spec["patterns"] and ".env.example" in spec["allow"]
    assert spec["home"] == str(home)
    real = str(root.resolve())
    assert spec["files"] == sorted([f"{real}/.env", f"{real}/k/tls.key", f"{home}/.ssh/id_ed25519"])


def test_every_home_pattern_is_scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # redteam: ~/.config/gh/hosts.yml, ~/.password-store/** and a policy's own ~/ pattern were secrets to the
    # analyzer but absent from the kernel's list (a script could read them)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ORCH_KEY_DIR", str(tmp_path / "no-key-yet"))
    root = make_workspace(tmp_path / "repo")
    files = [home / ".config" / "gh" / "hosts.yml", home / ".password-store" / "a" / "db.gpg",
             home / ".terraform.d" / "credentials.tfrc.json", home / ".config" / "tool" / "token"]
    for p in files + [home / ".config" / "gh" / "config.yml"]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x", encoding="utf-8")
    m = secrets.matcher(("~/.config/tool/token",))
    found = [f for f in secrets.find_secret_files(str(root.resolve()), m) if f.startswith(str(home))]
    assert sorted(found) == sorted(str(p) for p in files)
    trees, singles = secrets.home_locations(secrets.matcher(("~/*.key",)))
    assert str(home / ".password-store") in trees and str(home / ".config" / "gh" / "hosts.yml") in singles
    assert str(home) not in trees  # a pattern with no literal directory does not make the whole home a tree


def test_the_agents_own_logins_are_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # redteam2: `cat ~/.claude/.credentials.json` (and Codex's, Gemini's, opencode's, Copilot's token files) printed
    # the token the agent itself runs on: none was a secret pattern, so the kernel did not deny it
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ORCH_KEY_DIR", str(tmp_path / "no-key-yet"))
    root = make_workspace(tmp_path / "repo")
    rels = [".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
            ".local/share/opencode/auth.json", ".config/github-copilot/apps.json", ".copilot/config.json",
            ".cargo/credentials.toml", ".vault-token", ".pgpass", ".config/rclone/rclone.conf"]
    kept = [".claude/settings.json", ".codex/config.toml", ".gemini/settings.json"]  # configuration, not logins
    for rel in rels + kept:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("x", encoding="utf-8")
    m = secrets.matcher()
    found = {f for f in secrets.find_secret_files(str(root.resolve()), m) if f.startswith(str(home))}
    assert found == {str(home / rel) for rel in rels}


# --- the workspace's siblings (issue 21, remaining gaps: a sibling project's ../other/.env) ---------------------
def _tree(base: Path) -> Path:
    root = base / "parent" / "ws"
    (root / "src").mkdir(parents=True)
    other = base / "parent" / "other"
    (other / "a" / "b" / "c").mkdir(parents=True)
    (other / ".env").write_text("T=1\n")
    (other / "a" / "b" / "id_rsa").write_text("k")  # 3 levels below the parent: found
    (other / "a" / "b" / "c" / ".env").write_text("T=1\n")  # 4 levels: beyond the depth
    (other / "node_modules" / "x").mkdir(parents=True)
    (other / "node_modules" / "x" / ".env").write_text("T=1\n")  # skipped like in the workspace
    (base / "parent" / ".env").write_text("T=1\n")  # the parent itself
    (base / "elsewhere").mkdir()
    (base / "elsewhere" / ".env").write_text("T=1\n")
    (base / "parent" / "link").symlink_to(base / "elsewhere")  # never followed
    return root


def test_sibling_secrets_are_in_the_kernel_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.secrets import scan as secret_scan

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    secret_scan.clear()
    root = _tree(tmp_path)
    files = secrets.find_secret_files(str(root), secrets.matcher())
    parent = tmp_path / "parent"
    assert sorted(f for f in files if f.startswith(str(tmp_path))) == sorted(
        str(p) for p in (parent / ".env", parent / "other" / ".env", parent / "other" / "a" / "b" / "id_rsa"))


def test_sibling_scan_stops_at_its_budget(tmp_path: Path) -> None:
    from orchestrator.secrets import scan as secret_scan

    secret_scan.clear()
    root = _tree(tmp_path)
    m = secrets.matcher()
    assert secret_scan.sibling_secrets(str(root), m, frozenset(), budget=0) == [str(tmp_path / "parent" / ".env")]


def test_no_sibling_scan_below_slash_or_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.secrets import scan as secret_scan

    m = secrets.matcher()
    assert secret_scan.sibling_secrets("/srv", m, frozenset()) == []
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".env").write_text("T=1\n")
    (tmp_path / "ws").mkdir()
    assert secret_scan.sibling_secrets(str(tmp_path / "ws"), m, frozenset()) == []
