"""`engram demo`, the README's first command: a scripted session on the bundled memories."""

from __future__ import annotations

import pytest

from engram.cli import run


def test_demo_shows_delta_reset_and_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["demo"]) == 0
    out = capsys.readouterr().out
    steps = out.split("── step ")
    assert len(steps) == 10  # the header, then 9 steps
    assert "bodies sent: project-overview" in steps[1]  # session start: the always card
    assert "bodies sent: testing-conventions" in steps[3]
    assert "already loaded: testing-conventions" in steps[4]  # the repeated prompt
    assert "bodies sent" not in steps[4].split("already loaded")[0].replace("bodies sent: none", "")
    assert "routed: nothing relevant (abstained)" in steps[5]
    assert "bodies sent: testing-conventions" in steps[9]  # back after the compaction reset
    assert "of 9,500 chars" in out and "Engram proof: routed" in out


@pytest.mark.parametrize("host", ["codex", "gemini", "opencode"])
def test_demo_runs_in_each_hosts_dialect(host: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["demo", "--host", host]) == 0
    sent = [line for line in capsys.readouterr().out.splitlines() if "bodies sent:" in line]
    assert any("testing-conventions" in line for line in sent)  # OpenCode refills its slot whole


def test_demo_explains_hosts_it_cannot_play(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["demo", "--host", "windsurf"]) == 1
    assert "has no start event" in capsys.readouterr().err
