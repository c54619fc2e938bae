"""Programs that hand work to a server outside the sandbox (orchestrator/shell/rules/servers.py): a person decides;
read-only queries stay read-only (second red team, tests/data/sandbox_redteam2.jsonl R2-srv-*)."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "tmux new -d 'echo x > README.md'", "tmux send-keys -t 0 'git push -f' Enter", "tmux -c 'make'",
    "tmux run-shell 'x'", "screen -dm sh -c x", "screen -S s -X stuff 'x\\n'",
    "busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 m StartTransientUnit",
    "dbus-send --session --dest=x /x y", "gdbus call --session -d x -o /x -m y", "emacsclient -e '(x)'",
    "nvim --server /tmp/s --remote-send ':!x<CR>'", "vim --servername V --remote-send ':!x<CR>'",
    "code --install-extension ./x.vsix", "docker run -v /:/h alpine sh", "docker run --rm -v \"$PWD\":/w img make",
    "docker run --privileged img", "docker run --mount type=bind,src=/,dst=/h img", "podman run -v ~/.ssh:/k img",
])
def test_a_server_outside_the_sandbox_would_act_a_person_decides(cmd: str) -> None:
    assert "unclassified" in analyze(cmd).risks, analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "tmux ls", "tmux list-sessions", "tmux -V", "tmux display-message -p '#S'", "screen -ls", "busctl list",
    "vim src/app.py", "code src/app.py", "docker run --rm img pytest", "docker ps", "emacsclient --version",
])
def test_queries_and_local_use_stay_as_they_were(cmd: str) -> None:
    assert "unclassified" not in analyze(cmd).risks, analyze(cmd)
