"""Rules for service CLIs with verb trees (cloud, cluster, container, package managers): :data:`_SERVICE_CLIS`."""
from __future__ import annotations

import re

from orchestrator.shell.analysis import _KINDS
from orchestrator.shell.words import W, _has, _split_opts


def _host_mounts(run: _Run, low: list[str]) -> bool:
    """``docker|podman run`` with a host bind mount or host privileges: the daemon, outside the sandbox, would act
    (orchestrator/shell/rules/servers.py decides)."""
    if run.name not in ("docker", "podman"):
        return False
    from orchestrator.shell.rules import servers

    return servers.container_mounts(run, low)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


# ----------------------------------------------------------------------------------------------------------
# service CLIs: the verb words decide (list/get/describe read; delete/destroy destructive; others mutate)


class _Svc:
    """Per-CLI knowledge for the verb rules. depth: how many leading positional words form the command
    path; runs: first words that run arbitrary (project) code -> unknown; verb_first: `kubectl get deploy`,
    the first word is the verb and the rest are resource names."""

    __slots__ = ("read", "destroy", "mutate", "valued", "depth", "default", "destroy_opts", "runs", "verb_first")

    def __init__(self, read: frozenset[str], destroy: frozenset[str], mutate: frozenset[str],
                 valued: frozenset[str], depth: int, default: str, destroy_opts: frozenset[str],
                 runs: frozenset[str], verb_first: bool) -> None:
        self.read, self.destroy, self.mutate, self.valued = read, destroy, mutate, valued
        self.depth, self.default, self.destroy_opts, self.runs = depth, default, destroy_opts, runs
        self.verb_first = verb_first


_READ_VERBS = frozenset("""list ls get show describe view status info inspect search logs log version help
whoami ping top explain history cat read print diff check validate lint tail events api-resources api-versions
cluster-info current-context get-contexts get-clusters get-users can-i outdated deps uses leaves doctor
query exists tree why  env which home desc options formulae casks tap-info stats df du images ps
port plan output providers graph fmt-check verify preview browse wait whatis inventory contents completion
completions services synth synthesize acknowledge context find topic token ports audit help-search find-dupes
stars sbom trusted-root
""".split())
_DESTROY_VERBS = frozenset("""delete del rm remove destroy purge prune drop terminate uninstall wipe erase forget
rb rmi kill nuke reset-hard unregister deregister evict drain revoke truncate flush flushall flushdb undeploy
reset force_reset force-reset compact recreate break-lock rollback archive untag unsubscribe disable stop unset
roll rdelete repo-delete""".split())
_READ_PREFIXES = ("transact-get-", "admin-get-", "admin-list-", "describe-", "list-", "get-", "show-", "head-", "batch-get-", "check-", "search-", "lookup-",
                  "list_", "get_", "describe_", "show_", "test-", "validate-", "estimate-", "preview-",
                  "view-", "query-", "scan", "select-", "detect-", "filter-", "simulate-", "verify-")
_MUTATE_VERBS = frozenset("""add set create update put apply install change replace modify start stop restart
enable push upload run exec deploy attach detach import load save export edit patch scale rollout label
annotate tag untag login logout link unlink move mv copy cp sync mount unmount clone fork merge close reopen
comment approve review lock unlock unarchive fix activate deactivate promote suspend resume transfer rename sign invoke send publish trigger rerun
cancel restore rotate upgrade downgrade pin unpin mkdir touch write init new register grant assign""".split())
# Verbs that look like reads but write local state (kubeconfig, credentials, contexts).
_MUTATE_EXACT = frozenset("get-credentials use-context use rename-context set-context set-cluster set-credentials "
                          "index up build package".split())
_MUTATE_PREFIXES = ("create-", "update-", "put-", "set-", "add-", "modify-", "start-", "run-", "invoke-",
                    "attach-", "associate-", "enable-", "register-", "import-", "tag-", "untag-", "send-",
                    "publish-", "upload-", "restore-", "copy-", "replace-", "change-", "reboot-", "request-",
                    "authorize-", "allocate-", "accept-", "apply-", "assign-", "create_", "update_", "put_")
_DESTROY_PREFIXES = ("clear_", "clear-", "forget_", "forget-", "unsubscribe", "delete-", "remove-", "terminate-", "purge-", "destroy-", "deregister-", "delete_",
                     "drop-", "disable-", "revoke-", "cancel-", "stop-", "detach-", "disassociate-",
                     "force-delete", "batch-delete-", "reset-", "wipe-", "empty-", "delete")


def _command_path(run: _Run, svc: _Svc) -> tuple[list[str], list[str]] | None:
    """The command path (``s3 cp``, ``pr merge``: up to ``svc.depth`` leading non-option words) and the options;
    None when a path word is not literal (flagged unknown)."""
    args = run.args
    path: list[str] = []
    opts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        s = a.text
        if s == "--":
            break
        if s.startswith("-") and not a.dyn and len(s) > 1:
            name = s.split("=", 1)[0]
            opts.append(s)
            if path and name not in svc.valued:
                # Options after the command path: the rest are arguments, not more path words.
                opts.extend(x.text for x in args[i + 1:] if x.text.startswith("-"))
                break
            if "=" not in s and name in svc.valued and i + 1 < len(args):
                i += 1
            i += 1
            continue
        if a.dyn and len(path) < svc.depth and not (svc.verb_first and path) and not path_done(path, s):
            run.flag("unknown", f"{run.name}: subcommand is not literal ({s[:40]})")
            run.acc.unresolved = True
            return None
        if len(path) < svc.depth and not path_done(path, s):
            path.append(s)
        i += 1
    return path, opts


def _image_export(run: _Run, args: list[W], low: list[str]) -> None:
    """``docker save -o FILE`` / ``export --output=FILE`` write FILE; without -o the image goes to stdout."""
    for k, a in enumerate(args):
        if a.text in ("-o", "--output") and k + 1 < len(args):
            run.write(args[k + 1], f"{run.name} {low[-1]} -o")
            return
        if a.text.startswith("--output="):
            run.write(W(a.text.split("=", 1)[1]), f"{run.name} {low[-1]} -o")
            return


def _forge_api(run: _Run, args: list[W], low: list[str], optnames: set[str]) -> None:
    """``gh api`` / ``glab api``: GET and GraphQL queries read; DELETE destroys; any other method or sent field writes."""
    method = ""
    for k, a in enumerate(args):
        if a.text in ("-X", "--method") and k + 1 < len(args):
            method = args[k + 1].text.upper()
        elif a.text.startswith(("--method=", "-X")) and len(a.text) > 2:
            method = a.text.split("=", 1)[-1].upper() if "=" in a.text else a.text[2:].upper()
    fields = " ".join(a.text for a in args)
    if len(low) > 1 and low[1] in ("get", "post", "put", "patch", "delete"):
        method = method or low[1].upper()
    if method == "DELETE":
        run.flag("destructive", f"{run.name} api -X DELETE")
    elif method in ("GET", "HEAD"):
        return
    elif len(low) > 1 and low[1] == "graphql" and "mutation" not in fields:
        return  # a GraphQL query, not a mutation
    elif method or optnames & {"-f", "-F", "--field", "--raw-field", "--input", "-d", "--data"}:
        run.flag("mutating", f"{run.name} api sends data")


def _by_verbs(run: _Run, svc: _Svc, path: list[str], low: list[str], optnames: set[str]) -> None:
    """The verdict from the command path's words: runs project code, destroys, mutates, reads, else the default."""
    if low and low[0] in svc.runs:
        run.flag("unknown", f"{run.name} {low[0]} runs project code", risk="runs-code")
        return
    for p in low:
        if p in svc.destroy or p in _DESTROY_VERBS or p.startswith(_DESTROY_PREFIXES) or \
                (p.endswith(("delete", "-remove", "_remove")) and len(p) > 6):
            if p in svc.read:
                continue
            run.flag("destructive", f"{run.name} {' '.join(path)}")
            return
    if optnames & {"--reset", "--clear", "--unset"}:
        run.flag("mutating", f"{run.name} {' '.join(path)} {sorted(optnames & {'--reset', '--clear', '--unset'})[0]}")
        return
    for o in optnames:
        if o in ("--force-delete", "--cleanup", "--remove-orphans", "--volumes", "--wipe", "--erase"):
            run.flag("destructive", f"{run.name} {' '.join(path)} {o}")
            return
    # The verb is the last word of the command path that we can classify (`ip addr add`, `az vm list`).
    for p in reversed(low):
        if p in svc.mutate or p in _MUTATE_EXACT or p.startswith(("use-", "rename-", "set-")):
            run.flag("mutating", f"{run.name} {' '.join(path)}")
            return
        if p in svc.read or p in _READ_VERBS or p.startswith(_READ_PREFIXES):
            return
        if p in _MUTATE_VERBS or p.startswith(_MUTATE_PREFIXES):
            run.flag("mutating", f"{run.name} {' '.join(path)}")
            return
    if "--dry-run" in optnames or "--dryrun" in optnames:
        return
    run.flag(svc.default, f"{run.name} {' '.join(path)}".strip())



def _query_decides(run: _Run, args: list[W], path: list[str], low: list[str]) -> bool:
    """SQL passed with ``--query-string`` (athena, redshift-data): destructive SQL is flagged, a read-only query
    started is read-only. True when that decided the command."""
    qs = [a.text.split("=", 1)[1] if "=" in a.text else (args[k + 1].text if k + 1 < len(args) else "")
          for k, a in enumerate(args) if a.text.split("=", 1)[0] in ("--query-string",)]
    if not qs:
        return False
    from orchestrator.shell.rules.databases import _SQL_DESTROY, _sql_read_only  # loaded only for a query

    if any(_SQL_DESTROY.search(q) for q in qs):
        run.flag("destructive", f"{run.name} {' '.join(path)} runs destructive SQL")
        return True
    return bool(low and low[-1].startswith("start-query") and all(_sql_read_only(q) for q in qs))


def _service_cli(run: _Run, svc: _Svc) -> None:
    args = run.args
    split = _command_path(run, svc)
    if split is None:
        return
    path, opts = split
    low = [p.lower() for p in path]
    optnames = {o.split("=", 1)[0] for o in opts}
    if _prints_credentials(run.name, low, args):
        run.flag("unknown", f"{run.name} {' '.join(path)} prints secrets or credentials into the transcript")
        return
    if svc.verb_first and low and low[0] not in _VERB_GROUPS:
        low = low[:1]
    dry = [o for o in opts if o.split("=", 1)[0] in ("--dry-run", "--dryrun")]
    if dry and all(o.split("=", 1)[-1].lower() not in ("none", "false", "0") for o in dry):
        return  # the CLI only reports what it would do
    if args and args[0].text in svc.read and args[0].text.startswith("--"):
        return  # e.g. `brew --prefix python`
    if _query_decides(run, args, path, low) or _host_mounts(run, low):
        return
    if not path and opts and all(o.split("=", 1)[0] in svc.read for o in opts):
        return  # e.g. `brew --prefix python`
    if "--list" in optnames and not any(p in _DESTROY_VERBS for p in low):
        return  # `az devops configure --list`, `cargo owner --list`
    if "down" in low and optnames & {"-v", "--volumes", "--rmi"}:
        run.flag("destructive", f"{run.name} {' '.join(path)} removes volumes or images")
        return
    if run.name in ("terraform", "tofu") and low[:1] == ["apply"] and "-destroy" in optnames:
        run.flag("destructive", f"{run.name} apply -destroy")
        return
    if run.name in ("docker", "podman", "kubectl", "oc") and "exec" in low[:2]:
        _container_exec(run, args, svc)
        return
    if any(p in ("save", "export") for p in low) and run.name in ("docker", "podman"):
        _image_export(run, args, low)
        return
    if run.name in ("gh", "auth0", "glab") and low[:1] == ["api"]:
        _forge_api(run, args, low, optnames)
        return
    if any(o[:1] in "\u2010\u2011\u2012\u2013\u2014\u2212" for o in (a.text for a in args)):
        run.flag("unknown", f"{run.name}: argument starts with a unicode dash")
        return
    if any("secret" in p for p in low) and any(p.startswith(("update", "put")) for p in low):
        run.flag("destructive", f"{run.name} {' '.join(path)} overwrites a secret value")
        return
    for o in opts:
        name, _, val = o.partition("=")
        if name in svc.destroy_opts or (name.startswith(("--delete", "--remove", "--purge", "--prune"))
                                        and val.lower() not in ("false", "0", "no")):
            run.flag("destructive", f"{run.name} {' '.join(path)} {name}")
            return
    if not path:
        if optnames & {"--help", "-h", "--version", "-v", "-V"}:
            return
        if not args:
            if run.name in _BARE_PRINTS_HELP:
                return
            # A multi-command CLI with no subcommand: usually help, but a config default, alias or plugin
            # can make it do anything (pre-commit runs hooks, launchctl opens a prompt): ask.
            run.flag("unknown", f"{run.name} without a subcommand")
            return
    if optnames & {"--help", "-h"} or (low and low[-1] == "help") or (low and low[0] == "help") or (low == ["version"] and len(args) == 1):
        return
    if run.name in ("npm", "pnpm", "yarn", "bun") and low[:1] and low[0] in (
            "install", "i", "ci", "add", "isntall", "in", "update", "up", "upgrade", "rebuild") and \
            not any(a.text == "--ignore-scripts" for a in args) and "--dry-run" not in optnames:
        # package code runs: contained when sandboxed; the egress proxy decides which hosts it reaches
        run.flag("unknown", f"{run.name} {low[0]} runs package lifecycle scripts", risk="runs-code")
        return
    if run.name == "gh" and low[:2] in (["extension", "browse"], ["ext", "browse"]):
        run.flag("unknown", "gh extension browse is an interactive UI that installs/removes extensions")
        return
    if run.name == "gcloud" and low[:2] == ["app", "browse"]:
        run.flag("unknown", "gcloud app browse opens the deployed app (requests run its code)")
        return
    if run.name in ("npm", "pnpm", "yarn") and path[:1] in (["run"], ["run-script"]):
        k = next(k for k, a in enumerate(args) if a.text == path[0])
        if all(a.text.startswith("-") and a.text != "--" for a in args[k + 1:]):
            return  # `npm run` without a script name lists the scripts
    _by_verbs(run, svc, path, low, optnames)


# Multi-command CLIs whose bare invocation is fixed help text (no aliases, plugins or default command).
_BARE_PRINTS_HELP = frozenset("uv".split())


_DOCKER_EXEC_VALUED = frozenset("-e --env --env-file -u --user -w --workdir --detach-keys -c --container -n "
                                "--namespace --context --kubeconfig -H --host".split())


def _container_exec(run: _Run, args: list[W], svc: _Svc) -> None:
    """docker/kubectl exec: judge the command run inside the container (its paths are not ours)."""
    texts = [a.text for a in args]
    if "--" in texts:
        inner = args[texts.index("--") + 1:]
    else:
        k = texts.index("exec") + 1 if "exec" in texts else 0
        while k < len(args) and args[k].text.startswith("-"):
            k += 2 if args[k].text in _DOCKER_EXEC_VALUED else 1
        inner = args[k + 1:]  # skip the container / pod name
    if not inner:
        run.flag("unknown", f"{run.name} exec opens a shell")
        return
    sub = run.isolated(inner)
    if sub.rank > 0:
        kind = _KINDS[sub.rank]
        run.flag(kind, f"{run.name} exec runs a {kind} command in a container")


# Words that, for verb-first CLIs (kubectl, npm, cargo), name a group whose second word is the real verb.
_VERB_GROUPS = frozenset("c config rollout auth plugin certificate apply cache owner dist-tag access team org profile "
                         "token hook pkg audit version install container image compose volume network system "
                         "buildx context manifest swarm node service stack secret trust builder".split())


_CRED_VERBS = frozenset("get-secret-value print-access-token print-identity-token get-login-password "
                        "get-access-token get-authorization-token".split())


def _prints_credentials(name: str, low: list[str], args: list[W]) -> bool:
    """Reads whose output is a secret: ask instead of auto-allowing (the transcript is not a vault)."""
    texts = [a.text for a in args]
    if any(p in _CRED_VERBS for p in low):
        return True
    if name == "gh" and low[:2] == ["auth", "token"]:
        return True
    if name == "aws" and low[:1] == ["ssm"] and "--with-decryption" in texts:
        return True
    if name in ("kubectl", "oc"):
        if low[:2] == ["config", "view"] and any(t.startswith("--raw") or a.dyn for t, a in zip(texts, args)):
            return True
        if low[:1] == ["get"]:
            res = " ".join(texts)
            fmt = [texts[k + 1] if t in ("-o", "--output") and k + 1 < len(texts) else t.split("=", 1)[-1]
                   if t.startswith("--output=") else t[2:] for k, t in enumerate(texts)
                   if t in ("-o", "--output") or t.startswith(("-o", "--output="))]
            out = any(f not in ("name", "wide") for f in fmt)
            if re.search(r"\bsecrets?\b", res) and (out or any(a.dyn for a in args)):
                return True
            # An unresolved *format* value is not a resource name; only an unresolved resource could be secrets.
            fmt_vals = {k + 1 for k, t in enumerate(texts) if t in ("-o", "--output")}
            dyn_res = any(a.dyn for k, a in enumerate(args) if k not in fmt_vals
                          and not (a.text.startswith(("-o", "--output=")) and a.text not in ("-o", "--output")))
            if dyn_res and out:
                return True  # resource not known: could be secrets in full
    return False


def _classified(p: str, svc: _Svc) -> bool:
    return (p in svc.read or p in svc.mutate or p in svc.destroy or p in _READ_VERBS or p in _MUTATE_VERBS
            or p.startswith(_READ_PREFIXES + _MUTATE_PREFIXES))


def path_done(path: list[str], s: str) -> bool:
    # stop the command path at arguments that clearly are values (URLs, paths, key=value, ids)
    return bool(re.search(r"[/:=@]|^\d", s)) or (bool(path) and "." in s)


def _cli(read: str = "", destroy: str = "", mutate: str = "", valued: str = "", depth: int = 3,
         default: str = "mutating", destroy_opts: str = "", verb_first: bool = False, runs: str = "") -> _Svc:
    """A service CLI's verb lists (space-separated words) as a :class:`_Svc`."""
    return _Svc(frozenset(read.split()), frozenset(destroy.split()), frozenset(mutate.split()),
                frozenset((valued or _COMMON_VALUED).split()), depth, default, frozenset(destroy_opts.split()),
                frozenset(runs.split()), verb_first)


_COMMON_VALUED = ("--region --profile --output -o --query --endpoint-url --project --account --subscription "
                  "-n --namespace --context --kubeconfig -g --resource-group --format --repo -R --org "
                  "--cluster --zone --configuration --log-level --color --cli-input-json")

_SERVICE_CLIS: dict[str, _Svc] = {
    "aws": _cli(valued=_COMMON_VALUED, mutate="cp mv sync put-object", read="ls presign wait"),
    "az": _cli(valued=_COMMON_VALUED, depth=6, read="url summarize find"),
    "gcloud": _cli(valued=_COMMON_VALUED, depth=5, read="read"),
    "gsutil": _cli(valued=_COMMON_VALUED, read="ls du stat cat hash", destroy="rm rb", destroy_opts="-d"),
    "gh": _cli(valued=_COMMON_VALUED + " -L --limit -s --state -q --jq -t --template -w --web",
             read="checks diff view list status watch field-list item-list"),
    "glab": _cli(valued=_COMMON_VALUED),
    "kubectl": _cli(runs="exec run debug attach cp port-forward proxy", valued=_COMMON_VALUED + " -l --selector -f -c --container --field-selector", depth=2,
                  verb_first=True,
                  mutate="apply create patch replace scale set label annotate rollout edit exec run cp "
                         "expose autoscale taint certificate attach port-forward proxy debug",
                  read="get describe logs top explain version api-resources api-versions cluster-info diff "
                       "auth events wait status history completion kustomize can-i whoami"),
    "oc": _cli(valued=_COMMON_VALUED, depth=2, verb_first=True),
    "helm": _cli(valued=_COMMON_VALUED, depth=2, destroy="uninstall delete",
               read="list ls status get history show inspect search template lint version env verify"),
    "docker": _cli(runs="run exec", valued=_COMMON_VALUED + " -H --host -c --config --log-level -f --filter --format "
                 "--file -p --project-name --project-directory --env-file --profile -l", depth=3, verb_first=True,
                 read="ps images inspect logs version info history port top stats diff events search ls df "
                      "config",
                 mutate="run exec build pull push start restart create commit tag login logout cp up down "
                        "restart pause unpause update rename attach load import save export "),
    "podman": _cli(runs="run exec", valued=_COMMON_VALUED, depth=3,
                 read="ps images inspect logs version info history port top stats diff events search ls df",
                 mutate="run exec build pull push start restart create commit tag login cp up down"),
    "brew": _cli(depth=2, valued="-S", mutate="on off start stop restart run kill", read="-S list ls info search deps uses outdated doctor dr config leaves desc options log "
                             "cat docs analytics  fetch --config --cache --cellar --caskroom --prefix "
                             "--repository --repo --env --taps "
                             "formulae casks tap-info shellenv commands missing home homepage --prefix "
                             "--cellar --repository --cache --env --version --caskroom abv livecheck ",
               destroy="uninstall remove rm cleanup untap autoremove zap"),
    "npm": _cli(mutate="version", verb_first=True, runs="run run-script test t start restart exec x rebuild install-test it stop explore", depth=2, read="ls list ll la view info show v outdated search s find help config get explain why "
                            "doctor prefix root bin whoami ping fund query docs repo bugs help-search",
              destroy="_"),
    "pnpm": _cli(runs="run test start exec dlx create", depth=2, read="ls list ll view info outdated why audit root bin help"),
    "yarn": _cli(runs="run test start exec dlx node create", depth=2, read="list info why outdated help config bin"),
    "pip": _cli(depth=2), "pip3": _cli(depth=2),
    "uv": _cli(runs="run tool", depth=2, read="tree version help freeze dir list show check"),
    "cargo": _cli(runs="run r test t bench build b check c clippy install doc", depth=2, verb_first=True,
                read="fetch help version tree metadata search verify-project locate-project pkgid "
                              "read-manifest info"),
    "terraform": _cli(depth=2, runs="test", read="plan show validate output providers graph version console pull modules metadata "
                                  " ", destroy="destroy"),
    "tofu": _cli(depth=2, read="plan show validate output providers graph version", destroy="destroy"),
    "pulumi": _cli(depth=2, read="preview stack whoami about version logs config", destroy="destroy"),
    "rclone": _cli(depth=1, read="ls lsd lsl lsf lsjson size check tree cat about listremotes version md5sum "
                               "sha1sum hashsum", destroy="delete deletefile purge rmdir rmdirs cleanup dedupe sync move moveto",
                 mutate="copy copyto mkdir touch"),
    "restic": _cli(depth=2, valued="-o -r --repo --password-file", read="snapshots ls stats check diff find cat version"),
    "borg": _cli(depth=2, read="list info check diff version"),
    "vault": _cli(depth=3, read="read list status version"),
    "systemctl": _cli(depth=1, read="status show list-units list-unit-files is-active is-enabled is-failed cat "
                                  "list-timers list-sockets list-dependencies get-default",
                    destroy="stop disable mask kill"),
    "launchctl": _cli(depth=1, read="list print blame procinfo dumpstate print-disabled help version print-cache "
                                  "plist hostinfo resolveport dumpjpcategory managerpid manageruid managername "
                                  "error variant getenv examine dumpstate print-token", mutate="config",
                    destroy="remove unload bootout kill"),
    "auth0": _cli(depth=3),
    "wrangler": _cli(depth=3), "doppler": _cli(depth=3), "op": _cli(depth=3), "fastly": _cli(depth=3),
    "flipt": _cli(depth=3), "ldcli": _cli(depth=3), "nats": _cli(depth=3), "unleash": _cli(depth=3),
    "mc": _cli(depth=4, destroy="rm rb"), "velero": _cli(depth=3), "circleci": _cli(depth=3), "kong": _cli(depth=2),
    "deck": _cli(depth=3, destroy="sync reset"), "apigeecli": _cli(depth=3), "heroku": _cli(depth=2), "flyctl": _cli(depth=3),
    "fly": _cli(depth=3), "vercel": _cli(depth=2), "netlify": _cli(depth=2), "stripe": _cli(depth=3),
    "firebase": _cli(depth=2), "doctl": _cli(depth=4), "linode-cli": _cli(depth=3), "hcloud": _cli(depth=3),
    "eksctl": _cli(depth=3), "kind": _cli(depth=3), "minikube": _cli(depth=2), "k3d": _cli(depth=3),
    "rabbitmqctl": _cli(depth=1), "rabbitmqadmin": _cli(depth=2), "newrelic": _cli(depth=3), "azcopy": _cli(depth=1),
    "cdk": _cli(depth=1, read="ls list synth diff doctor docs metadata "
                                              "notices version", destroy="destroy"),
    "packer": _cli(depth=2, read="validate inspect version console installed required"),
    "ansible-config": _cli(depth=1, read="list dump view"),
    "ansible-vault": _cli(depth=1, read="view"),
    "go": _cli(runs="run test build generate install", depth=1, read="version env list doc vet help"),
    "conda": _cli(depth=2, read="list info search env config"),
    "poetry": _cli(runs="run shell install", depth=2, read="show check version about env config search"),
    "gem": _cli(depth=1, read="list search info query contents which environment specification help"),
    "apt": _cli(depth=1, read="list search show policy depends rdepends changelog"),
    "apt-cache": _cli(depth=1, read="search show policy depends rdepends pkgnames showpkg stats madison"),
    "snap": _cli(depth=1, read="list info find version services"),
    "flatpak": _cli(depth=1, read="list info search remote-ls history"),
    "ip": _cli(depth=2, read="show list ls a addr address link route r neigh n rule maddr monitor netconf"
                           " mroute tunnel l ro netns token ntable"),
}


def _pip(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-r", "--requirement", "-c", "--constraint", "-t", "--target",
                                      "--index-url", "-i", "--extra-index-url", "--format", "--python"))
    sub = pos[0].text if pos else ""
    if not pos:
        return
    if sub in ("list", "show", "freeze", "check", "help", "search", "inspect", "debug", "index",
               "hash"):
        return
    if sub == "config" and len(pos) > 1 and pos[1].text in ("list", "get", "debug"):
        return
    if sub == "cache" and len(pos) > 1 and pos[1].text in ("dir", "info", "list"):
        return
    if sub == "install" and _has(opts, "--dry-run"):
        return
    if sub in ("install", "wheel", "download") and not _has(opts, "--only-binary") or \
            (sub == "install" and _has(opts, "-e", "--editable")):
        # building an sdist runs the package's setup code: contained like any code when sandboxed (the egress
        # proxy decides which indexes it reaches)
        run.flag("unknown", f"pip {sub} may run package build code", risk="runs-code")
        return
    run.flag("mutating", f"pip {sub}")


def _uv(run: _Run) -> None:
    """uv/poetry: `uv run CMD` runs CMD (analyze it); other subcommands use the service-CLI rules."""
    args = run.args
    valued = {"--python", "-p", "--with", "--with-requirements", "--directory", "--project", "--package",
              "--env-file", "--extra", "--group", "--index", "--index-url", "--extra-index-url", "-w",
              "--only-group", "--no-group", "--config-file", "--cache-dir", "-C", "--isolated_"}
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in valued else 1
    if i < len(args) and args[i].text == "run":
        j = i + 1
        while j < len(args) and args[j].text.startswith("-"):
            if args[j].text == "--":
                j += 1
                break
            j += 2 if args[j].text in valued else 1
        inner = args[j:]
        if not inner:
            run.flag("unknown", f"{run.name} run without a command")
            return
        if inner[0].text.endswith(".py"):
            run.flag("unknown", f"{run.name} run executes a script")
            return
        run.sub(inner)
        return
    if run.name == "uv" and i < len(args) and args[i].text == "export":
        # `uv export` prints the lockfile as requirements to stdout unless -o/--output-file is given.
        outs = [args[k + 1] for k in range(i + 1, len(args) - 1) if args[k].text in ("-o", "--output-file")]
        outs += [W(a.text.split("=", 1)[1], a.dyn, a.glob) for a in args[i + 1:]
                 if a.text.startswith("--output-file=")]
        for o in outs:
            run.write(o, "uv export -o")
        return
    if run.name == "uv" and i < len(args) and args[i].text == "pip" and i + 1 == len(args):
        return  # bare `uv pip` prints the pip interface's help
    svc = _SERVICE_CLIS.get(run.name) or _cli(depth=2)
    _service_cli(run, svc)



def _fmt_or(name: str) -> Callable[[_Run], None]:
    """``NAME fmt`` formats files (like the formatters); every other verb is NAME's service CLI entry."""
    def rule(run: _Run) -> None:
        if run.args[:1] and run.args[0].text == "fmt":
            from orchestrator.shell.rules.editors import _formatter

            _formatter(run)
        else:
            _service_cli(run, _SERVICE_CLIS[name])
    return rule


def _compose(run: _Run) -> None:
    _service_cli(run, _SERVICE_CLIS["docker"])


_BD = _cli(depth=1, read="list show ready blocked stats search ")
_GALAXY = _cli(depth=2, read="list search info verify")
_PROFILES = _cli(depth=1, read="help status list show validate version")


def _bd(run: _Run) -> None:
    _service_cli(run, _BD)


def _ansible_galaxy(run: _Run) -> None:
    _service_cli(run, _GALAXY)


def _profiles(run: _Run) -> None:
    _service_cli(run, _PROFILES)


def _ansible(run: _Run) -> None:
    """Ad-hoc ansible runs a module on remote hosts (even -m ping ships and runs Python there): ask, unless it
    only lists hosts, checks syntax or runs in --check mode."""
    if not any(a.text in ("--list-hosts", "--syntax-check", "--version", "--check", "-C", "--help", "-h",
                          "--list-tasks") for a in run.args):
        run.flag("unknown", "ansible runs modules on remote hosts")


def _ansible_pull(run: _Run) -> None:
    # ansible-pull -C is --checkout (a branch), not --check.
    if not any(a.text in ("--help", "-h", "--version", "--check", "--list-hosts") for a in run.args):
        run.flag("unknown", "ansible-pull runs a playbook")


def _ansible_console(run: _Run) -> None:
    if not any(a.text in ("--help", "-h", "--version", "--list-hosts") for a in run.args):
        run.flag("unknown", "ansible-console is a REPL")


def _ansible_playbook(run: _Run) -> None:
    if not any(a.text in ("--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--check", "-C", "--help",
                          "-h", "--version") for a in run.args):
        run.flag("unknown", "ansible-playbook runs tasks on hosts")


def _ansible_inventory(run: _Run) -> None:
    if any(a.text == "--output" for a in run.args):
        out = next((run.args[i + 1].text for i, a in enumerate(run.args[:-1]) if a.text == "--output"), "")
        run.write(W(out), "ansible-inventory --output")


def _ansible_lint(run: _Run) -> None:
    if any(a.text.startswith("--fix") or a.text == "--write" for a in run.args):
        run.flag("mutating", "ansible-lint --fix rewrites files")


def _no_effect(run: _Run) -> None:
    """ansible-doc only prints documentation."""


RULES: dict[str, Callable[[_Run], None]] = {
    "pip": _pip, "pip3": _pip, "uv": _uv, "poetry": _uv,
    "terraform": _fmt_or("terraform"), "tofu": _fmt_or("tofu"), "packer": _fmt_or("packer"),
    "cargo": _fmt_or("cargo"),
    "docker-compose": _compose, "podman-compose": _compose, "bd": _bd, "profiles": _profiles,
    "ansible": _ansible,
    "ansible-pull": _ansible_pull, "ansible-console": _ansible_console, "ansible-doc": _no_effect,
    "ansible-inventory": _ansible_inventory, "ansible-lint": _ansible_lint, "ansible-playbook": _ansible_playbook,
    "ansible-galaxy": _ansible_galaxy,
}
