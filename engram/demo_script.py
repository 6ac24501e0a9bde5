"""The scripted session `engram demo` plays: host-neutral steps, mapped onto a host's own
event names."""

from __future__ import annotations

from typing import Iterator, NamedTuple

FILES = ("engram/hook.py", "hosts/claude.yaml", "tests/test_router.py")


class Step(NamedTuple):
    title: str
    kind: str
    prompt: str | None = None
    extra: tuple[tuple[str, str], ...] = ()
    event: str = ""


SCRIPT = (
    Step("session starts", "start", extra=(("source", "startup"),)),
    Step("a prompt about hosts", "prompt", "How do I add a new host adapter to engram?"),
    Step("a prompt about tests", "prompt", "What are our testing conventions for pytest fixtures?"),
    Step("the same prompt again", "prompt", "What are our testing conventions for pytest fixtures?"),
    Step("an off-topic prompt", "prompt", "thanks, looks good!"),
    Step("a subagent starts", "subagent", extra=(("agent_id", "demo-agent"),
                                                 ("agent_type", "general-purpose"))),
    Step("the context is compacted", "reset", extra=(("trigger", "manual"),)),
    Step("the session restarts after compaction", "start", extra=(("source", "compact"),)),
    Step("the tests prompt after compaction", "prompt",
         "What are our testing conventions for pytest fixtures?"),
)


def steps(event_names: dict[str, str]) -> Iterator[Step]:
    for step in SCRIPT:
        name = event_names.get(step.kind)
        if name:
            yield step._replace(event=name)
