"""Shell completion: commands, host names and card ids complete in bash, zsh and fish, through
the same entry point the `engram` executable runs; scripts print and install per shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_card


def complete(cwd: Path, env: dict[str, str]) -> str:
    full = {**os.environ, **env}
    result = subprocess.run([sys.executable, "-m", "engram"], cwd=cwd, env=full,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def bash(cwd: Path, line: str) -> list[str]:
    words = line.split(" ")
    return complete(cwd, {"_ENGRAM_COMPLETE": "complete_bash", "COMP_WORDS": line,
                          "COMP_CWORD": str(len(words) - 1)}).split()


@pytest.fixture
def store(workspace: Path) -> Path:
    write_card(workspace / ".agents" / ".engram", "db-migrations.md",
               "---\ntitle: Database migrations\n---\nReversible.\n")
    write_card(workspace / ".agents" / ".engram", "deploys.md", "---\ntitle: Deploys\n---\nTag.\n")
    return workspace


def test_bash_completes_commands_hosts_and_card_ids(store: Path) -> None:
    assert bash(store, "engram li") == ["lint", "link"]
    assert {"claude", "codex", "cursor"} <= set(bash(store, "engram link c"))
    assert "gemini" in bash(store, "engram unlink ")
    assert "all" in bash(store, "engram link a") and "all" in bash(store, "engram unlink a")
    assert "all" not in bash(store, "engram restore a")  # restore takes one host
    assert "claude" in bash(store, "engram restore c")
    assert bash(store, "engram show d") == ["db-migrations", "deploys"]
    assert bash(store, "engram route x --why-not de") == ["deploys"]


def test_zsh_and_fish_complete_card_ids_with_titles(store: Path) -> None:
    zsh = complete(store, {"_ENGRAM_COMPLETE": "complete_zsh",
                           "_TYPER_COMPLETE_ARGS": "engram show db"})
    assert '"db-migrations":"Database migrations"' in zsh
    fish = complete(store, {"_ENGRAM_COMPLETE": "complete_fish",
                            "_TYPER_COMPLETE_ARGS": "engram show de",
                            "_TYPER_COMPLETE_FISH_ACTION": "get-args"})
    assert fish.strip() == "deploys\tDeploys"


def test_completion_outside_a_workspace_offers_nothing_and_never_fails(tmp_path: Path) -> None:
    assert bash(tmp_path, "engram show ") == []


@pytest.mark.parametrize("shell,target", [("bash", ".bash_completions/engram.sh"),
                                          ("zsh", ".zfunc/_engram"),
                                          ("fish", ".config/fish/completions/engram.fish")])
def test_completion_scripts_print_and_install(shell: str, target: str, isolated_dirs: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from engram.cli import run

    assert run(["completion", shell]) == 0
    assert "_ENGRAM_COMPLETE=complete_" + shell in capsys.readouterr().out
    assert run(["completion", shell, "--install"]) == 0
    assert f"INSTALLED {shell} completion" in capsys.readouterr().out
    assert (isolated_dirs / target).is_file()
    assert run(["--help"]) == 0
    assert "--install-completion" in capsys.readouterr().out


def test_a_title_holding_a_secret_is_completed_redacted(workspace: Path) -> None:
    # zsh and fish show each id's title next to it: the shell prints what completion returns,
    # past engram's output layer.
    from secret_corpus import corpus

    token = next(secret for kind, _text, secret in corpus() if kind == "github-classic-pat")
    write_card(workspace / ".agents" / ".engram", "deploys.md",
               f"---\ntitle: Deploy with {token}\n---\nTag.\n")
    for shell in ("zsh", "fish"):
        out = complete(workspace, {"_ENGRAM_COMPLETE": f"complete_{shell}",
                                   "_TYPER_COMPLETE_ARGS": "engram show de",
                                   "_TYPER_COMPLETE_FISH_ACTION": "get-args"})
        assert "deploys" in out and token not in out and "REDACTED" in out


def test_a_title_holding_part_of_a_token_is_never_completed(workspace: Path) -> None:
    # A title YAML folded from two lines shows the halves of a token side by side, and a title
    # opening with a token's rest is half of one another card could complete: the gate holds
    # both cards back, and completion shows neither piece.
    from secret_corpus import corpus

    token = next(secret for kind, _text, secret in corpus() if kind == "github-classic-pat")
    memory = workspace / ".agents" / ".engram"
    write_card(memory, "folded.md", f"---\ntitle: Deploy with {token[:18]}\n  {token[18:]} now\n---\nTag.\n")
    write_card(memory, "rest.md", f"---\ntitle: {token[14:]} notes\n---\nTag.\n")
    for shell in ("zsh", "fish"):
        out = complete(workspace, {"_ENGRAM_COMPLETE": f"complete_{shell}",
                                   "_TYPER_COMPLETE_ARGS": "engram show ",
                                   "_TYPER_COMPLETE_FISH_ACTION": "get-args"})
        assert "folded" in out and "rest" in out, out
        assert token not in "".join(out.split()) and token[14:] not in out, out
