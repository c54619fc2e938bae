"""``orch key``: this machine's ledger signing key and the keys the team trusts (docs/ledger.md §4a).

    orch key show                   this machine's public key line (creates the key on first use) and its id
    orch key list                   the trusted keys (.orchestration/trusted_keys), this machine's marked
    orch key trust LINE|FILE|-      trust a teammate's key: their `orch key show` line, a .pub file, or stdin
    orch key trust --self           trust this machine's key
    orch key untrust KEY_ID         stop trusting a key (records it signed then fail `orch trace verify`)

The private key never leaves ``~/.config/orchestrator/keys`` (``$XDG_CONFIG_HOME``, ``$ORCH_KEY_DIR``); the
trusted keys file is a governance file: commit it, review changes to it like code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchestrator.state import keys
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.errors import UsageError
from orchestrator.core.output import out


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_workspace_arg(parser)
    parser.add_argument("action", choices=("show", "list", "trust", "untrust"))
    parser.add_argument("key", nargs="?", help="trust: a public key line, a .pub file or '-'; untrust: a key id")
    parser.add_argument("--self", action="store_true", dest="self_", help="trust: this machine's own key")
    parser.add_argument("--json", action="store_true")


def _own() -> tuple[str, str]:
    try:
        line = keys.own_public_line(create=True)
    except keys.KeyFileError as e:
        raise UsageError(str(e)) from None
    return line, keys.key_id(keys.parse_public_line(line)[0])


def _line_of(value: str | None) -> str:
    if not value:
        raise UsageError("trust: give a public key line (`orch key show` on the teammate's machine), a .pub file, "
                         "'-' for stdin, or --self")
    if value == "-":
        return sys.stdin.readline()
    if not value.startswith(keys.ALG + " ") and Path(value).is_file():
        return Path(value).read_text(encoding="utf-8").strip().splitlines()[0]
    return value


def run(args: argparse.Namespace) -> int:
    import json

    if args.action == "show":
        line, kid = _own()
        if args.json:
            out(json.dumps({"key_id": kid, "public": line, "private_key": str(keys.private_key_path())}))
        else:
            out(line)
            out(f"# key id {kid}; private key {keys.private_key_path()} (never copy it; teammates trust the line "
                "above with `orch key trust`)")
        return 0
    orch_dir = workspace_of(args).orch_dir
    if args.action == "trust":
        line = _own()[0] if args.self_ else _line_of(args.key)
        try:
            kid, added = keys.add_trusted(orch_dir, line)
        except keys.KeyFileError as e:
            raise UsageError(f"trust: {e}") from None
        out(f"{'trusted' if added else 'already trusted'}: {kid} ({keys.trusted_path(orch_dir)}; commit it)")
        return 0
    if args.action == "untrust":
        return _untrust(orch_dir, args.key or "")
    found = keys.load_trusted(orch_dir)
    trusted, problems = found if found is not None else ({}, [])
    own = None
    if keys.private_key_path().exists():
        own = _own()[1]
    if args.json:
        out(json.dumps({"trusted": sorted(trusted), "own": own, "problems": problems}))
        return 0
    if found is None:
        out(f"no {keys.TRUSTED_NAME} in {orch_dir} (created with this machine's key by the first signed record)")
    for kid in sorted(trusted):
        out(f"{kid}{'  (this machine)' if kid == own else ''}")
    for p in problems:
        out(f"problem: {p}")
    return 0


def _untrust(orch_dir: Path, kid: str) -> int:
    path = keys.trusted_path(orch_dir)
    if len(kid) < 4 or not path.exists():
        raise UsageError("untrust: give a key id (`orch key list`) of a trusted key")
    kept: list[str] = []
    dropped: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            raw, _ = keys.parse_public_line(line)
        except keys.KeyFileError:
            kept.append(line)
            continue
        (dropped if keys.key_id(raw).startswith(kid) else kept).append(line)
    if len(dropped) != 1:
        raise UsageError(f"untrust: {kid!r} matches {len(dropped)} trusted key(s); give the whole id")
    path.write_text("".join(kept), encoding="utf-8")
    out(f"untrusted: {keys.key_id(keys.parse_public_line(dropped[0])[0])}")
    return 0
