"""Secret files: which paths no agent may read, and one cheap matcher for them.

The defaults cover what a leaked credential is usually made of: environment files (``.env``, ``.env.*``), private
keys (``*.pem``, ``*.key``, ``id_rsa*``...), keystores, and the credential files of SSH, cloud and cluster CLIs in the
home directory. Templates meant to be read (``.env.example``, ``*.pub``, ``known_hosts``...) are allowed. The policy
adds patterns (``secrets.patterns``), exempts paths (``secrets.allow``, which wins) or drops the defaults
(``secrets.defaults: false``).

Pattern syntax (a small, documented subset of gitignore's):

- no ``/``: matches the file's *name* anywhere (``.env``, ``*.pem``, ``id_rsa*``);
- starting with ``~/``: the home directory (``~/.aws/credentials``, ``~/.config/gcloud/**``);
- starting with ``/``: an absolute path; any other pattern with a ``/`` is anchored at the workspace root
  (``config/master.key``);
- ``*`` and ``?`` stay inside one path component, ``**`` crosses components. Matching ignores case (a
  case-insensitive file system, or a ``.ENV`` copy, must not slip through).

Used on the hot path of every read (:mod:`orchestrator.pre.secrets`) and by the shell analyzer: a
:class:`SecretMatcher` is built once per pattern set (a few compiled alternations, no yaml, no pydantic, no
pathspec) and cached. The sandbox may ask :func:`secret_spec` for the same patterns to deny reads in the kernel.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: default secret patterns (see the module docstring for the syntax); documented in docs/configuration.md
DEFAULT_PATTERNS: tuple[str, ...] = (
    # environment files
    ".env", ".env.*", "*.env", ".envrc", ".flaskenv",
    # private keys and key stores
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*_rsa", "*_ed25519",
    # SSH, cloud, cluster and tool credentials in the home directory
    "~/.ssh/*", "~/.aws/credentials", "~/.config/gcloud/**", "~/.azure/**",
    "~/.kube/config", "~/.docker/config.json", "~/.gnupg/**", "~/.password-store/**",
    "~/.config/gh/hosts.yml", "~/.npmrc", "~/.pypirc", "~/.terraform.d/credentials.tfrc.json",
    # the coding agents' own logins (an agent's commands must not read the token the agent runs on)
    "~/.claude/.credentials.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json",
    "~/.gemini/mcp-oauth-tokens.json", "~/.gemini/mcp-oauth-tokens-v2.json", "~/.local/share/opencode/auth.json", "~/.local/share/opencode/mcp-auth.json",
    "~/.config/github-copilot/*.json", "~/.copilot/config.json",
    "~/.qwen/oauth_creds.json", "~/.qwen/mcp-oauth-tokens.json", "~/.qwen/mcp-oauth-tokens-v2.json", "~/.qwen/.env",
    "~/.cline/data/settings/providers.json",
    # other tools that keep a token in a file of their own
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.vault-token", "~/.pgpass", "~/.my.cnf",
    "~/.s3cfg", "~/.config/rclone/rclone.conf", "~/.config/hub", "~/.config/doctl/config.yaml",
    "~/.claude.json", "~/.composer/auth.json", "~/.gem/credentials", "~/.boto", "~/.local/share/keyrings/**",
    # shell and client histories: commands typed with a password or token in them
    "~/.bash_history", "~/.zsh_history", "~/.psql_history", "~/.mysql_history", "~/.python_history",
    "~/.node_repl_history", "~/.sqlite_history", "~/.rediscli_history",
    # token-bearing files wherever they are (a project's own .npmrc usually holds no token: not listed)
    ".netrc", "_netrc", ".git-credentials", "credentials.json", "service-account*.json",
    "*.tfstate", "*.tfstate.backup", "secrets.yml", "secrets.yaml", "master.key", "*.secret", "*.secrets",
)

#: default exemptions: templates and public halves that agents legitimately read
DEFAULT_ALLOW: tuple[str, ...] = (
    ".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults", "*.env.example",
    "*.env.sample", "*.env.template", "*.pub", "known_hosts", "known_hosts.old", "authorized_keys",
    "~/.ssh/config", "*.pub.asc", "*.pub.pem", "*.crt.pem", "*.cert.pem", "*.example.pem",
    # certificates (public) share the .pem suffix with keys: the usual names of certificate-only files
    "cert.pem", "fullchain.pem", "chain.pem", "ca.pem", "cacert.pem", "ca-bundle.pem", "ca-certificates.pem",
    "*-cert.pem", "*_cert.pem", "*-ca.pem", "*_ca.pem", "*-chain.pem",
)


def _glob_regex(pattern: str) -> str:
    """The regex source of one glob (``*`` and ``?`` within a component, ``**`` across)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")  # `a/**/b` also matches `a/b`
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class SecretMatcher:
    """Compiled secret and allow patterns. Hashable by its pattern lists (the shell analyzer caches on it)."""

    __slots__ = ("patterns", "allow", "home", "_name", "_path", "_allow_name", "_allow_path", "_key")

    def __init__(self, patterns: tuple[str, ...], allow: tuple[str, ...] = (), home: str | None = None) -> None:
        self.patterns = tuple(p for p in patterns if p.strip())
        self.allow = tuple(p for p in allow if p.strip())
        self.home = (home if home is not None else os.path.expanduser("~")).rstrip("/") or "/"
        self._name, self._path = self._compile(self.patterns)
        self._allow_name, self._allow_path = self._compile(self.allow)
        self._key = (self.patterns, self.allow, self.home)

    def _compile(self, patterns: tuple[str, ...]) -> tuple[Any, Any]:
        names: list[str] = []
        paths: list[str] = []
        for p in patterns:
            p = p.strip()
            if p.endswith("/"):
                p += "**"  # a directory pattern: everything below it
            if "/" not in p:
                names.append(_glob_regex(p))
            elif p.startswith("~/"):
                paths.append(re.escape(self.home) + "/" + _glob_regex(p[2:]))
            elif p.startswith("/"):
                paths.append(_glob_regex(p))
            else:
                # anchored at the workspace root: matched against the root-relative path, marked by a NUL prefix
                paths.append("\x00" + _glob_regex(p.lstrip("./")))
        name_rx = re.compile("|".join(f"(?:{s})" for s in names), re.I) if names else None
        path_rx = re.compile("|".join(f"(?:{s})" for s in paths), re.I) if paths else None
        return name_rx, path_rx

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretMatcher) and self._key == other._key

    def __repr__(self) -> str:
        return f"SecretMatcher({len(self.patterns)} patterns, {len(self.allow)} allowed)"

    def _hit(self, name_rx: Any, path_rx: Any, name: str, full: str, rel: str | None) -> bool:
        if name_rx is not None and name_rx.fullmatch(name):
            return True
        if path_rx is not None:
            if path_rx.fullmatch(full):
                return True
            if rel is not None and path_rx.fullmatch("\x00" + rel):
                return True
        return False

    def match(self, path: str, root: str | None = None, cwd: str | None = None) -> str | None:
        """The secret pattern ``path`` matches, or None (also None when an allow pattern exempts it).

        ``path`` may be relative (to ``cwd``, else ``root``), absolute, or start with ``~``/``$HOME``. No file
        system access: callers that follow symlinks pass the resolved path separately.
        """
        if not path:
            return None
        full = self.absolute(path, root, cwd)
        name = full.rsplit("/", 1)[-1]
        rel = None
        if root:
            r = root.rstrip("/")
            if full.startswith(r + "/"):
                rel = full[len(r) + 1:]
        if not self._hit(self._name, self._path, name, full, rel):
            return None
        if self._hit(self._allow_name, self._allow_path, name, full, rel):
            return None
        return self.which(name, full, rel)

    def holds_secrets(self, directory: str, root: str | None = None, cwd: str | None = None) -> str | None:
        """A home or absolute secret pattern that lies inside ``directory`` (a search over ``~`` or ``~/.ssh``
        reaches it), or None. Name patterns (``.env``) are not considered: see :mod:`orchestrator.pre.secrets`."""
        full = self.absolute(directory, root, cwd).rstrip("/") + "/"
        for p in self.patterns:
            if not (p.startswith("~/") or p.startswith("/")):
                continue
            lit = self.home + p[1:] if p.startswith("~/") else p
            lit = re.split(r"[*?\[]", lit, maxsplit=1)[0].lower()
            # the directory holds the secret location (a path inside it is for match())
            if lit.startswith(full.lower()):
                return p
        return None

    def absolute(self, path: str, root: str | None = None, cwd: str | None = None) -> str:
        """``path`` made absolute and normalised (``~`` and ``$HOME`` expanded), without touching the disk."""
        if path.startswith("~/") or path == "~":
            path = self.home + path[1:]
        elif path.startswith(("$HOME/", "${HOME}/")):
            path = self.home + path[path.index("/"):]
        if not path.startswith("/"):
            path = os.path.join(cwd or root or os.getcwd(), path)
        return os.path.normpath(path)

    def which(self, name: str, full: str, rel: str | None) -> str:
        """The first secret pattern that matches (for the denial message)."""
        for p in self.patterns:
            single = SecretMatcher.__new__(SecretMatcher)
            single.home = self.home
            n, pr = single._compile((p,))
            if self._hit(n, pr, name, full, rel):
                return p
        return self.patterns[0] if self.patterns else "?"


_cache: dict[tuple[Any, ...], SecretMatcher] = {}


def signing_key_patterns() -> tuple[str, ...]:
    """The ledger signing key's directory (:func:`orchestrator.state.keys.key_dir`, outside every workspace): always a
    secret, whatever the policy says (only its ``*.pub`` half is readable, by the default exemptions)."""
    from orchestrator.state.keys import key_dir

    d = os.path.abspath(key_dir())
    return (d + "/*", os.path.realpath(d) + "/*")


def matcher(patterns: tuple[str, ...] | list[str] = (), allow: tuple[str, ...] | list[str] = (),
            defaults: bool = True) -> SecretMatcher:
    """The (cached) matcher for the defaults plus ``patterns``, minus ``allow``; the ledger signing key's
    directory is always included."""
    keyp = signing_key_patterns()
    key = (tuple(patterns), tuple(allow), defaults, os.environ.get("HOME", ""), keyp)
    m = _cache.get(key)
    if m is None:
        base = (*DEFAULT_PATTERNS, *keyp) if defaults else keyp
        base_allow = DEFAULT_ALLOW if defaults else ()
        m = SecretMatcher(tuple(dict.fromkeys((*base, *patterns))), tuple(dict.fromkeys((*base_allow, *allow))))
        if len(_cache) > 32:
            _cache.clear()
        _cache[key] = m
    return m


def for_policy(policy: Any) -> SecretMatcher:
    """The matcher a policy (a :class:`~orchestrator.config.policy.PolicyView` or None for the defaults) configures."""
    sec = getattr(policy, "secrets", None)
    if sec is None:
        return matcher()
    return matcher(tuple(getattr(sec, "patterns", ()) or ()), tuple(getattr(sec, "allow", ()) or ()),
                   bool(getattr(sec, "defaults", True)))


def enabled(policy: Any) -> bool:
    """Whether read protection is on (``secrets.enabled``, default true)."""
    sec = getattr(policy, "secrets", None)
    return True if sec is None else bool(getattr(sec, "enabled", True))


def secret_spec(root: str | os.PathLike[str], policy: Any) -> dict[str, Any]:
    """What a sandbox needs to deny secret reads in the kernel, for workspace ``root`` and ``policy``.

    Returns ``{"patterns": [...], "allow": [...], "home": "/home/me", "files": [...]}``: the effective patterns
    (syntax in the module docstring) and the absolute paths of the existing files under ``root`` and in the home
    directory's credential locations that they match (a kernel rule needs concrete paths; new files made later
    are caught by the analyzer and read hooks, not by this list). ``policy`` None means the defaults; the caller
    loads the workspace's policy (this module is a leaf under the shell analyzer: it loads no configuration).
    """
    root = os.path.realpath(os.fspath(root))
    m = for_policy(policy)
    files: list[str] = []
    if enabled(policy):
        files = find_secret_files(root, m)
    return {"patterns": list(m.patterns), "allow": list(m.allow), "home": m.home, "files": files}


#: directories never scanned for secret files (large, and not where credentials live)
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                        ".pytest_cache", ".orchestration", "site-packages"})


def find_secret_files(root: str, m: SecretMatcher, *, limit: int = 300_000) -> list[str]:
    """Absolute paths of existing files under ``root``, in the home's credential directories and next to the
    workspace (:func:`orchestrator.secrets.scan.sibling_secrets`) that ``m`` matches (at most ``limit`` entries
    looked at per tree)."""
    found: list[str] = []
    home = m.home
    trees = [root] + [os.path.join(home, d) for d in (".ssh", ".aws", ".config/gcloud", ".azure", ".kube",
                                                     ".docker", ".gnupg")]
    from orchestrator.state.keys import key_dir

    trees.append(os.path.abspath(key_dir()))  # the ledger signing key (orchestrator/state/keys.py)
    singles = [os.path.join(home, f) for f in (".netrc", ".git-credentials", ".pypirc", ".npmrc")]
    more_trees, more_singles = home_locations(m)
    trees += [t for t in more_trees if t not in trees]
    singles += [s for s in more_singles if s not in singles]
    from orchestrator.secrets.scan import tree_secrets  # a name prefilter and a directory memo: cheap for every shell command

    for tree in trees:
        found.extend(tree_secrets(tree, m, root, _SKIP_DIRS, limit))
    # the workspace's neighbours (../other/.env): 3 levels below the parent, 5,000 entries at most (about 6 us an
    # entry cold, one lstat per directory warm: bench/bench_sibling_secrets.py, docs/performance.md)
    from orchestrator.secrets.scan import sibling_secrets

    found.extend(sibling_secrets(root, m, _SKIP_DIRS))
    found.extend(p for p in singles if os.path.isfile(p) and m.match(p, root) is not None)
    return sorted(dict.fromkeys(found))


def home_locations(m: SecretMatcher) -> tuple[list[str], list[str]]:
    """The directories and single files of the home directory that ``m``'s ``~/`` patterns name (the policy's own
    included): ``~/.password-store/**`` -> the tree ``~/.password-store``, ``~/.config/gh/hosts.yml`` -> that file.
    Without them a pattern the fixed list above does not scan would be denied by the analyzer only, and a script
    could read the file (redteam RT-home-*). A pattern with no literal directory (``~/*.key``) is not scanned (the
    whole home would be)."""
    trees: list[str] = []
    singles: list[str] = []
    for p in m.patterns:
        if not p.startswith("~/"):
            continue
        lit = p[2:]
        cut = min((lit.index(c) for c in "*?[" if c in lit), default=-1)
        if cut < 0:
            singles.append(os.path.join(m.home, lit))
        elif os.path.dirname(lit[:cut]):
            trees.append(os.path.join(m.home, os.path.dirname(lit[:cut])))
    return trees, singles


__all__ = ["DEFAULT_PATTERNS", "DEFAULT_ALLOW", "SecretMatcher", "matcher", "for_policy", "enabled", "secret_spec",
           "find_secret_files", "home_locations"]

