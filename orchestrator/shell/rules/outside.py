"""Outside effects: cloud, cluster, infrastructure, registry and forge CLIs that change the world beyond this machine.

The shell analyzer judges what a command does to *files*. ``terraform apply``, ``kubectl delete``, ``npm publish``
or ``gh pr merge`` touch no file in the workspace, yet they deploy, delete or publish for real. This module's table
says, per CLI, which command paths change remote state; :func:`check` (called by :mod:`orchestrator.shell.dispatch`
for every simple command) tags those with the ``outside-world`` risk, which the approval hook turns into a question to a
person (``outside_world`` in policy.yaml: ``ask``, ``deny`` or ``allow``). Read verbs (``terraform plan``, ``kubectl
get``, ``aws ... describe-*``, ``gh pr view``) and local ones (``terraform fmt``, ``kubectl config use-context``,
``docker build``) are not tagged.

A table row is ``CLI -> _Cli(outside=..., reads=..., local=...)``: space-separated command paths (``"pr merge"``,
``"apply"``), matched against the leading non-option words. ``outside`` wins; for the generic clouds (``aws``,
``gcloud``, ``az``) anything that is not a read or local verb counts as outside, since their verb lists are open.
"""

from __future__ import annotations

import re
from typing import Any


class _Cli:
    __slots__ = ("outside", "reads", "local", "default_outside", "depth")

    def __init__(self, outside: str = "", reads: str = "", local: str = "", default_outside: bool = False,
                 depth: int = 2) -> None:
        self.outside = tuple(tuple(p.split("+")) for p in outside.split())
        self.reads = tuple(tuple(p.split("+")) for p in reads.split())
        self.local = tuple(tuple(p.split("+")) for p in local.split())
        self.default_outside = default_outside
        self.depth = depth


# Command paths use "+" between words ("pr+merge" is `gh pr merge`); a one-word path matches any first word.
_TF = _Cli(outside="apply destroy import taint untaint refresh force-unlock state+rm state+mv state+push "
                   "state+replace-provider workspace+new workspace+delete",
           reads="plan show validate output providers graph version fmt init console state+list state+show "
                 "state+pull workspace+list workspace+show workspace+select get test login logout")
_KUBE = _Cli(outside="apply create delete patch replace scale set label annotate edit rollout+restart rollout+undo "
                     "rollout+pause rollout+resume expose autoscale taint drain cordon uncordon run cp "
                     "debug certificate+approve certificate+deny",
             reads="get describe logs top explain version api-resources api-versions cluster-info diff events "
                   "auth wait rollout+status rollout+history config kustomize completion plugin port-forward proxy")
_NPM = _Cli(outside="publish unpublish deprecate undeprecate dist-tag+add dist-tag+rm owner+add owner+rm "
                    "owner+remove access+grant access+revoke access+set team+create team+destroy team+add "
                    "team+rm org+set org+rm token+create token+revoke adduser add-user login star unstar "
                    "npm+publish npm+tag+add npm+tag+remove")
TABLE: dict[str, _Cli] = {
    "terraform": _TF, "tofu": _TF, "terragrunt": _TF,
    "pulumi": _Cli(outside="up update destroy refresh import cancel stack+rm state+delete state+unprotect",
                   reads="preview stack+ls stack+output whoami about version logs config"),
    "kubectl": _KUBE, "oc": _KUBE,
    "helm": _Cli(outside="install upgrade uninstall delete rollback push test",
                 reads="list ls status get history show template lint search version env dependency repo plugin "
                       "package verify pull registry+login"),
    "aws": _Cli(default_outside=True,
                reads="help sts+get-caller-identity s3+ls s3+presign",
                local="configure history cli-dev ecr+get-login-password"),
    "gcloud": _Cli(default_outside=True, depth=5,
                   local="config auth components info help topic version init alpha+interactive"),
    "az": _Cli(default_outside=True, depth=5,
               local="login logout account config extension version upgrade find interactive bicep+build "
                     "cloud+list configure feedback self-test"),
    "docker": _Cli(outside="push login manifest+push image+push trust+sign service+create service+update "
                           "service+rm service+scale stack+deploy stack+rm swarm+init swarm+join swarm+leave "
                           "node+rm node+update secret+create secret+rm config+create config+rm"),
    "podman": _Cli(outside="push login manifest+push image+push"),
    "npm": _NPM, "pnpm": _NPM, "yarn": _NPM, "bun": _Cli(outside="publish"),
    "twine": _Cli(outside="upload register", reads="check"),
    "cargo": _Cli(outside="publish yank owner login"),
    "gem": _Cli(outside="push yank owner signin"),
    "poetry": _Cli(outside="publish"), "uv": _Cli(outside="publish"), "flit": _Cli(outside="publish"),
    "hatch": _Cli(outside="publish"), "mvn": _Cli(outside="deploy release:perform"),
    "gh": _Cli(depth=3,
               outside="release+create release+delete release+edit release+upload release+delete-asset pr+merge "
                       "pr+create pr+close pr+reopen pr+edit pr+review pr+comment pr+ready pr+lock pr+unlock "
                       "issue+create issue+close issue+reopen issue+edit issue+comment issue+delete issue+transfer "
                       "issue+lock issue+unlock issue+pin issue+unpin issue+develop repo+create repo+delete "
                       "repo+edit repo+archive repo+unarchive repo+rename repo+fork repo+deploy-key repo+sync "
                       "workflow+run workflow+enable workflow+disable run+cancel run+rerun run+delete secret+set "
                       "secret+delete variable+set variable+delete gist+create gist+delete gist+edit label+create "
                       "label+delete label+edit label+clone ssh-key+add ssh-key+delete gpg-key+add gpg-key+delete "
                       "cache+delete ruleset project+create project+delete project+edit project+item-add "
                       "project+item-edit project+item-delete",
               reads="pr+view pr+list pr+diff pr+checks pr+status pr+checkout issue+view issue+list issue+status "
                     "repo+view repo+list repo+clone release+view release+list release+download run+view run+list "
                     "run+watch run+download workflow+view workflow+list auth browse search status api"),
    "glab": _Cli(depth=3, outside="mr+merge mr+create mr+close mr+reopen mr+update mr+approve mr+note release+create "
                                  "release+delete issue+create issue+close issue+update issue+delete issue+note "
                                  "repo+create repo+delete repo+archive ci+run ci+retry ci+delete variable+set "
                                  "variable+delete"),
    "vercel": _Cli(outside="deploy --prod promote rollback remove rm alias domains env redeploy"),
    "netlify": _Cli(outside="deploy sites:create sites:delete env:set env:unset link"),
    "flyctl": _Cli(outside="deploy destroy launch scale secrets apps+create apps+destroy machine"),
    "fly": _Cli(outside="deploy destroy launch scale secrets apps+create apps+destroy machine"),
    "heroku": _Cli(outside="create destroy apps:create apps:destroy config:set config:unset ps:scale releases:rollback"
                           " addons:create addons:destroy run"),
    "firebase": _Cli(outside="deploy hosting:disable functions:delete database:set database:remove firestore:delete"),
    "wrangler": _Cli(outside="deploy publish delete secret+put secret+delete kv:key+put kv:key+delete r2+object+put "
                             "r2+object+delete"),
    "cdk": _Cli(outside="deploy destroy bootstrap"),
    "sam": _Cli(outside="deploy delete sync"),
    "serverless": _Cli(outside="deploy remove rollback"), "sls": _Cli(outside="deploy remove rollback"),
    "eksctl": _Cli(outside="create delete upgrade scale drain set unset enable utils"),
    "doctl": _Cli(default_outside=True, depth=4, local="auth version completion"),
    "ansible-playbook": _Cli(default_outside=True, depth=0),
    "ansible": _Cli(default_outside=True, depth=0),
    "vault": _Cli(outside="write delete put kv+put kv+delete kv+destroy kv+patch secrets+enable secrets+disable "
                          "policy+write policy+delete auth+enable auth+disable token+revoke lease+revoke"),
    "gsutil": _Cli(outside="cp mv rm rb mb rsync setmeta acl+set iam+set"),
    "rclone": _Cli(outside="copy copyto move moveto sync delete deletefile purge rmdir rmdirs mkdir"),
}

#: read verbs of the generic clouds (aws operations are ``describe-*``, gcloud and az verbs ``list``/``show``...)
_READ_OPS = re.compile(r"^(describe|list|get|show|head|batch-get|scan|query|search|lookup|validate|test|estimate|"
                       r"preview|simulate|check|detect|filter|view|read|wait|help|explain|download|tail|logs?|"
                       r"print|export-log|browse|ls|presign)(-.*|s)?$|^get-iam-policy$")
_WRITE_OPS = re.compile(r"^(create|delete|update|deploy|set|add|remove|patch|import|export|start|stop|reset|resize|"
                        r"restart|submit|run|execute|ssh|scp|enable|disable|attach|detach|apply|put|upload|copy|"
                        r"move|rename|cancel|undelete|rollback|promote|publish|invoke|call|send|tag|untag|grant|"
                        r"revoke|terminate|reboot|modify|associate|disassociate|register|deregister|authorize)(-.*)?$")
#: global options whose value is the next word (so it is not taken for a command word)
_VALUED = frozenset("-n --namespace --context --kubeconfig --cluster --region --profile --project --zone -o --output "
                    "-g --resource-group --subscription --account -R --repo -C --chdir --endpoint-url -s --server "
                    "--configuration --stack -i --inventory -u --user --format --query".split())
#: options that make an otherwise outside command a dry run
_DRY = frozenset("--dry-run --dryrun --check --syntax-check --list-hosts --list-tasks".split())


def _path(args: list[Any], depth: int) -> list[str]:
    """The leading command words (options and their glued values skipped; a value-looking word ends it)."""
    words: list[str] = []
    skip = False
    for a in args:
        t = a.text
        if skip:
            skip = False
            continue
        if t == "--":
            break
        if t.startswith("-"):
            skip = t in _VALUED  # the option's value is the next word
            continue
        if a.dyn or re.search(r"[/:=@]", t) and not t.startswith(("sites:", "apps:", "config:", "addons:", "kv:",
                                                                      "ps:", "releases:", "hosting:", "functions:",
                                                                      "database:", "firestore:", "env:",
                                                                      "release:")):
            break
        words.append(t.lower())
        if len(words) >= max(depth, 1) + 2:
            break
    return words


def _starts(words: list[str], paths: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    for p in paths:
        if tuple(words[:len(p)]) == p:
            return p
    return None


def judge(name: str, args: list[Any]) -> str | None:
    """The reason ``name args`` changes the outside world, or None (a read, a local verb, or not a known CLI)."""
    cli = TABLE.get(name)
    if cli is None:
        return None
    texts = {a.text.split("=", 1)[0] for a in args}
    if not args or texts & {"--version", "--help", "-h"} or (len(args) == 1 and args[0].text in ("version", "help")):
        return None
    if texts & _DRY and name not in ("vercel",):
        return None
    if name in ("aws", "gcloud", "az") and texts & {"--help", "help"}:
        return None
    words = _path(args, cli.depth)
    if name == "vercel" and "--prod" in texts:
        return "vercel --prod deploys to production"
    if name == "gh" and words[:1] == ["api"]:
        return _gh_api(args)
    hit = _starts(words, cli.outside)
    if hit is not None:
        return f"{name} {' '.join(hit)}"
    if _starts(words, cli.reads) is not None or _starts(words, cli.local) is not None:
        return None
    if not cli.default_outside:
        return None
    if cli.depth == 0:
        return f"{name} runs against remote hosts"
    if name == "aws" and words[:1] == ["s3"] and len(words) > 1:
        return _aws_s3(words[1], args)
    # the generic clouds: the first word that is a verb decides (`gcloud compute instances describe vm1`); aws's
    # operation is its second word; a path with no known verb counts as a change (their verb lists are open)
    verbs = words[1:2] if name == "aws" else words[1:]  # the first word is a service or group (`gcloud run ...`)
    if not verbs:
        return None
    for v in verbs:
        if _READ_OPS.match(v):
            return None
        if _WRITE_OPS.match(v):
            break
    return f"{name} {' '.join(words[:cli.depth + 1])}"


def _aws_s3(op: str, args: list[Any]) -> str | None:
    if op in ("ls", "presign"):
        return None
    targets = [a.text for a in args if not a.text.startswith("-")]
    if op in ("cp", "mv", "sync") and targets and not targets[-1].startswith("s3://"):
        return None  # a download into this machine: the analyzer judges the local write
    return f"aws s3 {op}"


def _gh_api(args: list[Any]) -> str | None:
    texts = [a.text for a in args]
    for k, t in enumerate(texts):
        method = t.split("=", 1)[1] if t.startswith("--method=") else texts[k + 1] if t in ("-X", "--method") and \
            k + 1 < len(texts) else t[2:] if t.startswith("-X") and len(t) > 2 else None
        if method is not None and method.upper() != "GET":
            return f"gh api {method.upper()}"
    if any(t in ("-f", "-F", "--field", "--raw-field", "--input") or t.startswith(("--field=", "--raw-field="))
           for t in texts):
        return "gh api with fields (a POST)"
    return None


def check(run: Any) -> None:
    """Tag the simple command ``run`` (an :class:`orchestrator.shell.run._Run`) with ``outside-world`` if it changes
    remote state; the kind becomes at least ``mutating`` (it is never read-only)."""
    name = run.name
    if name not in TABLE:
        return
    why = judge(name, run.args)
    if why is not None:
        run.acc.flag("mutating", f"{why} changes state outside this machine", "outside-world")


__all__ = ["TABLE", "judge", "check"]
