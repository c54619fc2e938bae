"""Each package manager's effective registry, read from the person's own configuration (no tool is run).

One function per ecosystem, each ``(read, env, have) -> [(url, source)]``: ``read(path)`` returns a file's text (or
None) and records it for the cache key (:class:`orchestrator.egress.sources.Reader`), ``env`` is the hook's
environment, ``have(tool)`` whether a program is on ``PATH``. The URL may be a plain host; a tool's built-in
default counts when the tool is installed and its configuration does not replace it (pip's is PyPI, npm's the npm
registry...). Where a setting can come from several places, the same precedence as the tool: the environment,
then the user's file, then the system's.

What is read: npm/pnpm (``npm_config_registry`` and ``@scope:registry``; ``~/.npmrc`` or
``NPM_CONFIG_USERCONFIG``; ``$PREFIX/etc/npmrc``), yarn (``YARN_NPM_REGISTRY_SERVER``, ``~/.yarnrc.yml``
``npmRegistryServer``/``npmScopes``, classic ``~/.yarnrc``), pip (``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``,
``PIP_CONFIG_FILE``, the user and system ``pip.conf``, the running virtualenv's), uv (``UV_DEFAULT_INDEX``,
``UV_INDEX_URL``, ``UV_INDEX``, ``UV_EXTRA_INDEX_URL``, ``~/.config/uv/uv.toml``), cargo (``~/.cargo/config.toml``
registries and source replacements, ``CARGO_REGISTRIES_*_INDEX``), Go (``GOPROXY``, ``GOSUMDB``, the ``go env``
file), RubyGems (``~/.gemrc`` sources), Maven (``~/.m2/settings.xml`` mirrors and repositories) and Gradle's
defaults. A project-level file (a workspace ``.npmrc``, ``pyproject.toml``'s ``[tool.uv]``) is not read here:
agents can write it (:mod:`orchestrator.egress.sources` reports it instead).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

Read = Callable[[str], "str | None"]
Found = list[tuple[str, str]]

PYPI = ("pypi.org", "files.pythonhosted.org")
NPM = "registry.npmjs.org"


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _xdg(env: Mapping[str, str]) -> str:
    return env.get("XDG_CONFIG_HOME") or os.path.join(_home(env), ".config")


def _env_ci(env: Mapping[str, str], name: str) -> str | None:
    """npm reads its ``npm_config_*`` variables case-insensitively."""
    lower = name.lower()
    for key, value in env.items():
        if key.lower() == lower and value:
            return value
    return None


def _ini_values(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of an ini-like file (npmrc, pip.conf), continuation lines joined."""
    out: list[tuple[str, str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if raw[:1] in " \t" and out and "=" not in line:
            sec, key, value = out[-1]
            out[-1] = (sec, key, value + " " + line)
            continue
        key, sep, value = line.partition("=")
        if sep:
            out.append((section, key.strip(), value.strip().strip('"').strip("'")))
    return out


def _expand(value: str, env: Mapping[str, str]) -> str:
    """npmrc's ``${VAR}`` substitutions."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: env.get(m.group(1), ""), value)


def npm(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    files = [env.get("NPM_CONFIG_USERCONFIG") or _env_ci(env, "npm_config_userconfig")
             or os.path.join(_home(env), ".npmrc")]
    prefix = _env_ci(env, "npm_config_prefix")
    node = _which(env, "node")
    if not prefix and node:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(node)))
    globalconfig = _env_ci(env, "npm_config_globalconfig") or (os.path.join(prefix, "etc", "npmrc") if prefix else "")
    files.append(globalconfig)
    registry = _env_ci(env, "npm_config_registry")
    found: Found = []
    scoped: dict[str, tuple[str, str]] = {}
    for key, value in env.items():
        if key.lower().startswith("npm_config_@") and key.lower().endswith(":registry") and value:
            scoped.setdefault(key.lower()[len("npm_config_"):-len(":registry")], (value, f"environment {key}"))
    for path in files:
        text = read(path) if path else None
        for _, key, value in _ini_values(text or ""):
            if key == "registry" and registry is None:
                registry = _expand(value, env)
                found.append((registry, f"npm registry ({path})"))
            elif key.startswith("@") and key.endswith(":registry"):
                scoped.setdefault(key[:-len(":registry")], (_expand(value, env), f"npm {key} ({path})"))
    if registry and not found:
        found.append((registry, "npm registry (environment npm_config_registry)"))
    if registry is None and (have("npm") or have("pnpm") or have("node")):
        found.append((NPM, "npm's default registry"))
    found += [(url, source) for url, source in scoped.values()]
    return found


def yarn(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not have("yarn") and not have("corepack"):
        return []
    found: Found = []
    server = env.get("YARN_NPM_REGISTRY_SERVER")
    berry = read(os.path.join(_home(env), ".yarnrc.yml")) or ""
    for line in berry.splitlines():
        m = re.match(r'\s*npmRegistryServer:\s*["\']?([^"\'\s]+)', line)
        if m:
            found.append((m.group(1), "yarn npmRegistryServer (~/.yarnrc.yml)"))
    classic = read(os.path.join(_home(env), ".yarnrc")) or ""
    for line in classic.splitlines():
        m = re.match(r'\s*registry\s+["\']?([^"\'\s]+)', line)
        if m:
            found.append((m.group(1), "yarn registry (~/.yarnrc)"))
    if server:
        found.append((server, "environment YARN_NPM_REGISTRY_SERVER"))
    if not any("npmRegistryServer" in s for _, s in found) and not server:
        found.append(("registry.yarnpkg.com", "yarn's default registry"))
    return found


def pip(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not (have("pip") or have("pip3") or have("python3") or have("python")):
        return []
    files = [f for f in (env.get("PIP_CONFIG_FILE"),) if f and f != os.devnull]
    dirs = (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":")
    files += [os.path.join(d, "pip", "pip.conf") for d in dirs] + ["/etc/pip.conf",
              os.path.join(_home(env), ".pip", "pip.conf"), os.path.join(_xdg(env), "pip", "pip.conf")]
    if env.get("VIRTUAL_ENV"):
        files.append(os.path.join(env["VIRTUAL_ENV"], "pip.conf"))
    index: tuple[str, str] | None = None
    extra: Found = []
    for path in files:  # later files win (pip's order: global, user, site)
        for section, key, value in _ini_values(read(path) or ""):
            if section not in ("global", "install", "download"):
                continue
            key = key.replace("_", "-")
            if key == "index-url":
                index = (value, f"pip index-url ({path})")
            elif key == "extra-index-url":
                extra += [(url, f"pip extra-index-url ({path})") for url in value.split()]
    if env.get("PIP_INDEX_URL"):
        index = (env["PIP_INDEX_URL"], "environment PIP_INDEX_URL")
    extra += [(url, "environment PIP_EXTRA_INDEX_URL") for url in env.get("PIP_EXTRA_INDEX_URL", "").split()]
    found = [index] if index else [(host, "pip's default index (PyPI)") for host in PYPI]
    return found + extra


def uv(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not have("uv"):
        return []
    found: Found = []
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_INDEX", "UV_EXTRA_INDEX_URL"):
        for url in env.get(name, "").split():
            found.append((url.rpartition("=")[2] if "=" in url.split("://")[0] else url, f"environment {name}"))
    text = read(os.path.join(_xdg(env), "uv", "uv.toml")) or ""
    for m in re.finditer(r'^\s*(?:index-url|extra-index-url|url)\s*=\s*["\']([^"\']+)', text, re.M):
        found.append((m.group(1), "uv (~/.config/uv/uv.toml)"))
    if not any(n in env for n in ("UV_DEFAULT_INDEX", "UV_INDEX_URL")) and "index-url" not in text:
        found += [(host, "uv's default index (PyPI)") for host in PYPI]
    return found


def cargo(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not have("cargo"):
        return []
    home = env.get("CARGO_HOME") or os.path.join(_home(env), ".cargo")
    text = read(os.path.join(home, "config.toml")) or read(os.path.join(home, "config")) or ""
    found: Found = [(m.group(1).removeprefix("sparse+"), f"cargo registry ({home}/config.toml)")
                    for m in re.finditer(r'^\s*(?:index|registry)\s*=\s*["\']([^"\']+)', text, re.M)]
    for key, value in env.items():
        if key.startswith("CARGO_REGISTRIES_") and key.endswith("_INDEX") and value:
            found.append((value.removeprefix("sparse+"), f"environment {key}"))
    if not re.search(r"^\s*replace-with\s*=", text, re.M):
        found += [("index.crates.io", "cargo's default registry"), ("static.crates.io", "cargo's default registry")]
    return found


def go(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not have("go"):
        return []
    settings: dict[str, str] = {}
    goenv = env.get("GOENV") or os.path.join(_xdg(env), "go", "env")
    for line in (read(goenv) or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            settings[key.strip()] = value.strip()
    proxy = env.get("GOPROXY") or settings.get("GOPROXY") or "https://proxy.golang.org,direct"
    sumdb = env.get("GOSUMDB") or settings.get("GOSUMDB") or "sum.golang.org"
    found = [(url, "Go's GOPROXY") for url in re.split(r"[,|]", proxy) if url not in ("direct", "off", "")]
    if sumdb != "off":
        found.append((sumdb.split()[-1] if " " in sumdb else sumdb.split("+")[0], "Go's GOSUMDB"))
    return found


def gem(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    if not (have("gem") or have("bundle")):
        return []
    text = read(os.path.join(_home(env), ".gemrc")) or ""
    sources = re.findall(r"^\s*-\s*(\S+://\S+)", text, re.M)
    if sources:
        return [(url, "gem sources (~/.gemrc)") for url in sources]
    return [("rubygems.org", "RubyGems' default source"), ("index.rubygems.org", "RubyGems' default source")]


def maven(read: Read, env: Mapping[str, str], have: Callable[[str], bool]) -> Found:
    found: Found = []
    if have("mvn"):
        text = read(os.path.join(_home(env), ".m2", "settings.xml")) or ""
        found += [(url, "Maven (~/.m2/settings.xml)") for url in re.findall(r"<url>\s*([^<\s]+)\s*</url>", text)]
        if "<mirrorOf>*</mirrorOf>" not in text and "<mirrorOf>central</mirrorOf>" not in text:
            found.append(("repo.maven.apache.org", "Maven Central (Maven's default)"))
    if have("gradle"):
        found += [(host, "Gradle's defaults") for host in ("repo.maven.apache.org", "plugins.gradle.org",
                                                            "services.gradle.org")]
    return found


ECOSYSTEMS = (npm, yarn, pip, uv, cargo, go, gem, maven)


def _which(env: Mapping[str, str], name: str) -> str | None:
    for directory in (env.get("PATH") or os.defpath).split(os.pathsep):
        path = os.path.join(directory or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None
