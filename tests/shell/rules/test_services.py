"""Service CLIs (cloud, cluster, containers, package managers): verbs, credentials, table defaults."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "kubectl get secret db -o yaml", "kubectl config view --raw", "aws secretsmanager get-secret-value --secret-id x",
    "aws ssm get-parameter --name p --with-decryption", "gh auth token", "gcloud auth print-access-token",
])
def test_reads_that_print_credentials_ask(cmd: str) -> None:
    assert analyze(cmd).kind == "unknown", analyze(cmd)


@pytest.mark.parametrize("cmd,kind", [
    ("kubectl get pods", "read_only"), ("kubectl delete pod x", "destructive"), ("kubectl apply -f x.yaml", "mutating"),
    ("kubectl exec pod -- ls", "read_only"), ("kubectl exec pod -- rm -rf /data", "destructive"),
    ("docker ps -a", "read_only"), ("docker system prune -af", "destructive"), ("docker exec c cat /etc/hosts", "read_only"),
    ("aws s3 ls s3://b", "read_only"), ("aws ec2 terminate-instances --instance-ids i-1", "destructive"),
    ("aws s3 sync . s3://b --delete", "destructive"), ("aws ec2 describe-instances --instance-ids i-1", "read_only"),
    ("gh pr list", "read_only"), ("gh pr merge 3", "mutating"), ("gh repo delete o/r", "destructive"),
    ("gh api repos/o/r", "read_only"), ("gh api -X DELETE repos/o/r", "destructive"),
    ("az vm list", "read_only"), ("az group delete -n rg", "destructive"), ("helm upgrade x c --dry-run", "read_only"),
    ("terraform plan", "read_only"), ("terraform apply", "mutating"), ("terraform destroy", "destructive"),
    ("npm ls", "read_only"), ("npm install x", "unknown"), ("npm ci --ignore-scripts", "mutating"), ("npm test", "unknown"), ("cargo build", "unknown"),
    ("psql -c 'select 1'", "read_only"), ("psql -c 'DROP TABLE t'", "destructive"),
    ("sqlite3 db 'insert into t values (1)'", "mutating"), ("sqlite3 -readonly db 'DROP TABLE t'", "read_only"),
    ("curl -X DELETE https://api/x/1", "destructive"), ("curl -d a=1 https://api", "mutating"),
    ("curl -s https://api/x", "read_only"), ("ip addr show", "read_only"), ("ip route add 1.2.3.0/24 dev e0", "mutating"),
])
def test_service_cli_verbs(cmd: str, kind: str) -> None:
    assert analyze(cmd).kind == kind, analyze(cmd)


@pytest.mark.parametrize("cmd", ["security frobnicate", "ansible-test integration", "tmutil frobnicate",
                                 "diskutil eraseDisk JHFS+ X disk2", "defaults write com.x k v", "networksetup -setv6off x",
                                 "launchctl load x.plist", "dpkg -i x.deb", "rpm -e pkg", "hostnamectl set-hostname h",
                                 "pmset -a sleep 0", "scutil --set HostName x", "pkgutil --forget com.x"])
def test_table_driven_tools_default_to_not_read_only(cmd: str) -> None:
    # Guards the verb/prefix tables: an unlisted action must never fall through to read_only.
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "npm run build",
])
def test_unknown(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "docker compose down -v", "terraform apply -destroy -auto-approve",
])
def test_more_destructive_forms(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "npm install", "pip install -e .", "yarn add left-pad",
])
def test_code_running_installs_and_editors_are_unknown(cmd: str) -> None:
    assert analyze(cmd).kind == "unknown", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # a multi-command CLI without a subcommand (a default command, alias or plugin can do anything), remote
    # execution, actions bound to keys or interactive installers
    "brew", "cargo", "gcloud", "helm", "kubectl", "launchctl", "ansible all -m ping",
    "ansible all -m debug -a 'var=x'", "ansible-pull -U https://x/r -C main p.yml", "gh extension browse",
    "gcloud app browse",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "uv export -o requirements.txt",
])
def test_mutating_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "uv", "uv pip", "uv export", "uv export --no-dev --format requirements-txt", "npm run", "npm run --list",
    "ansible all --list-hosts", "ansible --version", "kubectl get pods -o $FORMAT", "brew -S python",
    "docker exec c ls", "docker container exec c ls", "gh browse",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "kubectl get $RES -o yaml",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)
