"""Codex CLI setup beyond hooks.json: the MCP server in ``.codex/config.toml``, hook trust, and a doctor check.

What Codex 0.169.0 needs before it runs a project's hooks (read in codex-rs: hooks/src/engine/discovery.rs,
config/src/fingerprint.rs; verified with the real binary in tests/e2e/test_codex_cli.py):

1. the project is trusted — ``[projects."<root>"] trust_level = "trusted"`` in the *user's* config
   (``$CODEX_HOME/config.toml``, default ``~/.codex/config.toml``). Untrusted, the whole project layer
   (``.codex/hooks.json`` and ``.codex/config.toml``, hence also the MCP server) is ignored;
2. each hook is trusted — ``[hooks.state."<abs hooks.json>:<event>:<group>:<handler>"] trusted_hash =
   "sha256:…"`` in the user's config, the hash of the hook's normalised identity (:func:`hook_hash`); an untrusted
   or *modified* hook is skipped without a word in ``codex exec``. Codex's ``/hooks`` screen writes these entries;
   ``orch install codex --trust`` writes the same; ``codex --dangerously-bypass-hook-trust`` skips the check for one
   run;
3. the ``hooks`` feature is on (the default; ``[features] codex_hooks`` is the old alias of ``hooks``).

This module imports only the stdlib (``tomllib`` where available, Python >= 3.11) and the leaf
:mod:`orchestrator.adapters.managed`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters.managed import MARK, SERVER

HOOKS_FILE = ".codex/hooks.json"
CONFIG_FILE = ".codex/config.toml"
#: Codex's default hook timeout (seconds), part of a hook's trust identity
DEFAULT_TIMEOUT = 600
#: hook events whose matcher Codex ignores (the matcher is then not part of the trust identity)
_NO_MATCHER = frozenset({"UserPromptSubmit", "Stop"})
#: MCP tools Codex may call without asking: the handshake only renders the intent (its PreToolUse hook validates and
#: records the selection); in a sandboxed session (``-s workspace-write``) Codex otherwise asks before every MCP
#: call, and with ``approval_policy = "never"`` (``codex exec``) refuses it. ``record_lesson`` (writes AGENTS.md)
#: keeps Codex's default.
AUTO_APPROVED_TOOLS = ("select_active_intent", "list_intents")
_BEGIN = "# >>> orchestrator (managed by `orch install codex`; `orch uninstall codex` removes this block)"
_END = "# <<< orchestrator"
_TRUST_BEGIN = "# >>> orchestrator trust for {root} (`orch install codex --trust`)"
_TRUST_END = "# <<< orchestrator trust for {root}"


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string accepts JSON's escapes


def _load_toml(path: Path) -> dict[str, Any] | None:
    """The parsed TOML file; ``{}`` when absent; None when unreadable or unparseable (or no tomllib)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    if sys.version_info < (3, 11):  # pragma: no cover - tomllib is 3.11+
        return None
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """Codex's user config: ``$CODEX_HOME/config.toml``, default ``~/.codex/config.toml``."""
    env = os.environ if env is None else env
    home = env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return Path(home) / "config.toml"


# ------------------------------------------------------------------------------------------- hook trust
def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The ``trusted_hash`` Codex expects for one command hook: sha256 of the canonical JSON of
    ``{event_name, matcher?, hooks: [{type, command, timeout, async, statusMessage?}]}`` (absent fields dropped,
    timeout defaulted to 600, keys sorted, no whitespace)."""
    normal: dict[str, Any] = {"type": "command", "command": handler.get("command", ""),
                              "timeout": max(1, int(handler.get("timeout") or DEFAULT_TIMEOUT)),
                              "async": bool(handler.get("async", False))}
    if isinstance(handler.get("statusMessage"), str):
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [normal]}
    if matcher is not None and event not in _NO_MATCHER:
        identity["matcher"] = matcher
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def our_hooks(root: Path) -> list[tuple[str, str, str]]:
    """``(event, state key, trusted hash)`` of every orchestrator hook in the project's ``.codex/hooks.json``."""
    path = Path(root) / HOOKS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out: list[tuple[str, str, str]] = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for gi, group in enumerate(groups if isinstance(groups, list) else ()):
            if not isinstance(group, dict):
                continue
            for hi, handler in enumerate(group.get("hooks") or ()):
                if isinstance(handler, dict) and str(handler.get("command", "")).endswith(MARK):
                    key = f"{path}:{_snake(event)}:{gi}:{hi}"
                    out.append((event, key, hook_hash(event, group.get("matcher"), handler)))
    return out


def trust_block(root: Path, *, project: bool = True) -> str:
    """The user-config TOML that trusts the project (unless ``project=False``: already trusted) and orchestrator's
    hooks as installed now."""
    root = Path(root)
    lines = [_TRUST_BEGIN.format(root=root)]
    if project:
        lines += [f"[projects.{_toml_str(str(root))}]", 'trust_level = "trusted"', ""]
    for _event, key, digest in our_hooks(root):
        lines += [f"[hooks.state.{_toml_str(key)}]", f"trusted_hash = {_toml_str(digest)}", ""]
    lines.append(_TRUST_END.format(root=root))
    return "\n".join(lines) + "\n"


def _strip_block(text: str, begin: str, end: str) -> str:
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == begin:
            skipping = True
            continue
        if skipping and line.rstrip("\n") == end:
            skipping = False
            continue
        if not skipping:
            out.append(line)
    return "".join(out)


def write_trust(root: Path, config: Path | None = None) -> Path:
    """Trust the project and orchestrator's hooks in Codex's user config (replacing an earlier such block).

    Refuses (``ConfigError``) when the user's config already has a ``projects`` table for this root or a
    ``hooks.state`` entry for one of the keys outside our block: duplicate TOML tables would break the file.
    """
    from orchestrator.core.errors import ConfigError
    from orchestrator.core.fsutil import atomic_write

    root = Path(root)
    config = config or user_config_path()
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    rest = _strip_block(text, _TRUST_BEGIN.format(root=root), _TRUST_END.format(root=root))
    project_header = f"[projects.{_toml_str(str(root))}]"
    # a project Codex itself already trusts (its first-run dialog writes this table) is left as it is
    foreign_project = project_header in rest and not _project_trusted(rest, root)
    clashes = [h for h in ([project_header] if foreign_project else []) +
               [f"[hooks.state.{_toml_str(k)}]" for _e, k, _h in our_hooks(root)] if h in rest]
    if clashes:
        raise ConfigError(f"already has {', '.join(clashes)}; remove those tables (or trust the hooks in Codex's "
                          "/hooks screen) and run `orch install codex --trust` again", file=config)
    if rest and not rest.endswith("\n"):
        rest += "\n"
    config.parent.mkdir(parents=True, exist_ok=True)
    block = trust_block(root, project=project_header not in rest)
    atomic_write(config, (rest + ("\n" if rest.strip() else "") + block).encode("utf-8"))
    return config


def remove_trust(root: Path, config: Path | None = None) -> Path | None:
    """Remove the block :func:`write_trust` added for ``root`` (``orch uninstall codex``); the path if changed."""
    from orchestrator.core.fsutil import atomic_write

    root = Path(root)
    config = config or user_config_path()
    try:
        text = config.read_text(encoding="utf-8")
    except OSError:
        return None
    rest = _strip_block(text, _TRUST_BEGIN.format(root=root), _TRUST_END.format(root=root))
    if rest == text:
        return None
    atomic_write(config, rest.rstrip("\n").encode("utf-8") + (b"\n" if rest.strip() else b""))
    return config


def _project_trusted(text: str, root: Path) -> bool:
    """Does this config text already say ``trust_level = "trusted"`` for ``root``?"""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return False
        return ((data.get("projects") or {}).get(str(root)) or {}).get("trust_level") == "trusted"
    header = f"[projects.{_toml_str(str(root))}]"  # pragma: no cover - Python 3.10
    tail = text.split(header, 1)[1].split("\n[", 1)[0]
    return bool(re.search(r'^\s*trust_level\s*=\s*"trusted"', tail, re.M))


# ------------------------------------------------------------------------------------------- MCP server
def mcp_block(entry: dict[str, Any]) -> str:
    """``[mcp_servers.orchestrator]`` as a managed TOML block for the project's ``.codex/config.toml``."""
    lines = [_BEGIN, f"[mcp_servers.{SERVER}]", f"command = {_toml_str(entry['command'])}",
             "args = [" + ", ".join(_toml_str(a) for a in entry.get("args", [])) + "]"]
    env = entry.get("env") or {}
    if env:
        lines.append("env = { " + ", ".join(f"{k} = {_toml_str(v)}" for k, v in env.items()) + " }")
    for tool in AUTO_APPROVED_TOOLS:
        lines += [f"[mcp_servers.{SERVER}.tools.{tool}]", 'approval_mode = "approve"']
    lines.append(_END)
    return "\n".join(lines) + "\n"


def install_mcp(root: Path, entry: dict[str, Any]) -> Path | None:
    """Write (or refresh) our block in ``.codex/config.toml``; the path when it changed, None otherwise.

    A user's own ``[mcp_servers.orchestrator]`` outside the block is kept and ours is not added (``ConfigError``
    would be the alternative; a duplicate table is invalid TOML)."""
    from orchestrator.core.fsutil import atomic_write

    path = Path(root) / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    rest = _strip_block(text, _BEGIN, _END)
    if re.search(rf'^\s*\[mcp_servers\.(?:{SERVER}|"{SERVER}")\]', rest, re.M):
        return None  # the user registered a server of that name themselves
    if rest and not rest.endswith("\n"):
        rest += "\n"
    new = rest + ("\n" if rest.strip() else "") + mcp_block(entry)
    if new == text:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, new.encode("utf-8"))
    return path


def uninstall_mcp(root: Path) -> Path | None:
    """Remove our block from ``.codex/config.toml`` (the file too when nothing else is left)."""
    path = Path(root) / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    rest = _strip_block(text, _BEGIN, _END)
    if rest == text:
        return None
    if rest.strip():
        from orchestrator.core.fsutil import atomic_write

        atomic_write(path, rest.rstrip("\n").encode("utf-8") + b"\n")
    else:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    return path


# ------------------------------------------------------------------------------------------- install notes
def notes(root: Path) -> list[str]:
    """What `orch install codex` tells the user about trust (Codex skips untrusted hooks silently)."""
    cfg = user_config_path()
    return [
        "Codex runs project hooks only when the project AND each hook are trusted; untrusted, every write lands "
        "ungoverned (codex exec prints nothing about it). Either:",
        f"  - run `orch install codex --trust`: adds [projects.\"{root}\"] trust_level = \"trusted\" and the hooks' "
        f"[hooks.state.…] trusted_hash entries to {cfg};",
        "  - or trust the project when Codex asks, then approve the hooks in Codex's /hooks screen;",
        "  - or (automation that vets its hooks) run `codex --dangerously-bypass-hook-trust` (project trust is still "
        "needed for .codex/ to load).",
        "Re-trust after every `orch install codex` that changed .codex/hooks.json (the hash covers the command). "
        "`orch doctor` says whether the hooks will run.",
    ]


# ------------------------------------------------------------------------------------------- doctor
def check_codex(ws: Any) -> Iterable[Any]:
    """``orch doctor``: will Codex actually run orchestrator's hooks (and see its MCP server) here?"""
    from orchestrator.core.findings import Finding

    root = Path(ws.root)
    hooks = our_hooks(root)
    if not hooks:
        if (root / HOOKS_FILE).exists():
            yield Finding("codex.hooks", "warn", f"{HOOKS_FILE} has no orchestrator hooks", "orch install codex")
        return
    cfg_path = user_config_path()
    cfg = _load_toml(cfg_path)
    fix_trust = f"orch install codex --trust (writes {cfg_path}), or trust them in Codex's /hooks screen"
    if cfg is None:
        yield Finding("codex.trust", "warn", f"cannot read {cfg_path} (unparseable, or Python < 3.11 without "
                      "tomllib): whether Codex trusts the hooks is unknown", fix_trust)
        return
    problems: list[str] = []
    project = ((cfg.get("projects") or {}).get(str(root)) or {}) if isinstance(cfg.get("projects"), dict) else {}
    if project.get("trust_level") != "trusted":
        problems.append(f"the project {root} is not trusted in {cfg_path} (Codex ignores .codex/ entirely)")
    feats = f if isinstance(f := cfg.get("features"), dict) else {}
    if feats.get("hooks") is False or feats.get("codex_hooks") is False:
        problems.append("the `hooks` feature is disabled ([features] hooks = false)")
    states = ((cfg.get("hooks") or {}).get("state") or {}) if isinstance(cfg.get("hooks"), dict) else {}
    untrusted, modified, disabled = [], [], []
    for event, key, digest in hooks:
        state = states.get(key) if isinstance(states, dict) else None
        state = state if isinstance(state, dict) else {}
        if state.get("enabled") is False:
            disabled.append(event)
        elif not state.get("trusted_hash"):
            untrusted.append(event)
        elif state["trusted_hash"] != digest:
            modified.append(event)
    if untrusted:
        problems.append(f"hooks not trusted: {', '.join(untrusted)}")
    if modified:
        problems.append(f"hooks changed since they were trusted: {', '.join(modified)}")
    if disabled:
        problems.append(f"hooks disabled in Codex: {', '.join(disabled)}")
    if problems:
        yield Finding("codex.trust", "fail", "Codex will NOT run orchestrator's hooks: " + "; ".join(problems)
                      + " (unless started with --dangerously-bypass-hook-trust)", fix_trust)
    else:
        yield Finding("codex.trust", "ok", f"Codex will run orchestrator's {len(hooks)} hooks (project and hooks "
                      f"trusted in {cfg_path})")
    try:
        mcp_text = (root / CONFIG_FILE).read_text(encoding="utf-8")
    except OSError:
        mcp_text = ""
    if re.search(rf'^\s*\[mcp_servers\.(?:{SERVER}|"{SERVER}")\]', mcp_text, re.M):
        yield Finding("codex.mcp", "ok", f"MCP server `{SERVER}` registered in {CONFIG_FILE}")
    else:
        yield Finding("codex.mcp", "warn", f"no `{SERVER}` MCP server in {CONFIG_FILE}: the agent cannot select an "
                      "intent", "orch install codex")
