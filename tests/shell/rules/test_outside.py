"""Outside effects: the CLI table (orchestrator/shell/rules/outside.py) and the approval it triggers in the real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.engine.pipeline import Governor
from orchestrator.shell import analyze
from orchestrator.engine.tools import to_call
from tests.conftest import make_workspace

OUTSIDE = [
    "terraform apply -auto-approve", "terraform destroy", "tofu apply", "terraform state rm aws_s3_bucket.b",
    "kubectl apply -f k8s/", "kubectl delete pod web-1", "kubectl scale deploy/web --replicas=3",
    "kubectl rollout restart deploy/web", "kubectl -n prod run tmp --image=busybox", "helm upgrade --install web ./chart",
    "helm uninstall web", "aws ec2 run-instances --image-id ami-1", "aws s3 cp build.zip s3://bucket/",
    "aws s3 rm s3://bucket/x", "aws --region eu-west-1 lambda update-function-code --function-name f",
    "gcloud run deploy api --source .", "gcloud compute instances delete vm1", "az group delete -n rg",
    "az webapp deploy --name x", "docker push registry.example/app:1", "docker login registry.example",
    "npm publish", "pnpm publish --access public", "yarn npm publish", "twine upload dist/*", "cargo publish",
    "gh pr merge 12 --squash", "gh release create v1.0", "gh repo delete me/x --yes", "gh api -X POST repos/x/y/issues",
    "gh issue close 3", "pulumi up --yes", "ansible-playbook -i hosts site.yml", "vercel --prod", "flyctl deploy",
]
READS = [
    "terraform plan", "terraform show", "terraform validate", "terraform fmt -check", "tofu plan",
    "kubectl get pods -A", "kubectl describe pod web-1", "kubectl logs web-1", "kubectl rollout status deploy/web",
    "kubectl config use-context dev", "kubectl exec web -- ls", "helm list", "helm status web", "helm template ./chart",
    "aws ec2 describe-instances", "aws s3 ls s3://bucket", "aws sts get-caller-identity",
    "aws s3 cp s3://bucket/x.txt /tmp/x.txt", "gcloud compute instances list", "gcloud run services describe api",
    "gcloud config set project p", "az vm list", "az account show", "docker build -t app .", "docker ps",
    "npm view react version", "npm install", "twine check dist/*", "gh pr view 12", "gh pr list",
    "gh api repos/x/y", "gh run list", "pulumi preview", "ansible-playbook --check site.yml",
    "kubectl apply --dry-run=client -f k8s/",
]


@pytest.mark.parametrize("command", OUTSIDE)
def test_outside_is_tagged(command: str) -> None:
    sh = analyze(command)
    assert "outside-world" in sh.risks, (sh.kind, sh.reasons)
    assert sh.kind != "read_only"


@pytest.mark.parametrize("command", READS)
def test_reads_and_local_verbs_are_not(command: str) -> None:
    assert "outside-world" not in analyze(command).risks


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "repo")


def _pre(root: Path, command: str, channel: str = "agent-ask") -> object:
    gov = Governor(root, approval_channel=channel)
    gov.select_intent("INT-001", "s1")
    return gov.pre(to_call("Bash", {"command": command}, session_id="s1", cwd=str(root)))


def test_pipeline_asks_a_person(root: Path) -> None:
    verdict = _pre(root, "kubectl apply -f k8s/")
    assert verdict.decision == "ask"
    assert any("outside this machine" in r for r in verdict.error["reasons"])
    assert _pre(root, "kubectl get pods").allowed
    assert _pre(root, "terraform plan").allowed


def test_policy_deny_and_allow(root: Path) -> None:
    policy = root / ".orchestration" / "policy.yaml"
    policy.write_text("outside_world: deny\n", encoding="utf-8")
    verdict = _pre(root, "npm publish")
    assert verdict.decision == "deny" and verdict.error["type"] == "outside-world"
    policy.write_text("outside_world: allow\n", encoding="utf-8")
    assert _pre(root, "gh pr merge 3").allowed
