"""`engram new ID`: write a valid card to the workspace's memory folder."""

from __future__ import annotations

from pathlib import Path

from engram import fileio, formats, globs, importer, output, paths
from engram import workspace as workspace_module
from engram.errors import EngramError

PLACEHOLDER = "Replace this line with the rule: what to do, why, and how to check it."


def _split(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in globs.split_top_level(value)
            if part.strip()]


def run(*, card_id: str, title: str | None, tags: list[str], applies_to: list[str],
        always: bool, priority: int | None, body: str | None, cwd: Path) -> int:
    if not formats.is_valid_id(card_id):
        raise EngramError(f"{card_id!r} is not a valid id",
                          "use letters, digits, '.', '_' and '-', e.g. db-migrations")
    if priority is not None and not 0 <= priority <= 100:
        raise EngramError("--priority must be between 0 and 100")
    root = workspace_module.find_root_str(cwd)
    if root is None:
        raise EngramError(f"no workspace found at or above {cwd}", "run `engram init` first")
    ws = workspace_module.load(root)
    if ws is not None and ws.roots:
        from engram import index

        for card in index.load_or_build(ws).all_cards():
            if card.id == card_id:
                raise EngramError(f"a card with the id {card_id!r} exists: {card.path}",
                                  f"edit it, or `engram show {card_id}`")
    target = Path(root) / paths.MEMORY_DIR_NAME / f"{card_id}.md"
    if target.exists():
        raise EngramError(f"{target} exists", "pick another id")
    title = title or card_id.replace("-", " ").replace("_", " ").capitalize()
    text = importer.render_card(card_id, title, body or PLACEHOLDER, tags=_split(tags),
                                applies_to=_split(applies_to), always=always, priority=priority)
    fileio.atomic_write_text(target, text)
    shown = target.relative_to(Path(cwd)) if target.is_relative_to(cwd) else target
    output.write(f"CREATED {shown}\n")
    if not body:
        output.write("  write the rule in its body (lint warns while the placeholder is "
                         "there), then: engram lint --strict\n")
    return 0
