"""How big a card is for each host: the rendered body (header included) measured in the host's
own unit, against the host's budget. A card larger than a budget is never sent in full there,
only its one-line card."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from engram.card import Card
from engram.record import Record, frozen


@frozen
class HostFit(Record):
    host: str
    unit: str  # chars | tokens
    limit: int
    size: int  # the card's rendered body in `unit`

    @property
    def fits(self) -> bool:
        return self.size <= self.limit

    def describe(self) -> str:
        verdict = "fits" if self.fits else "too large: only its one-line card is sent"
        return f"{self.size:,} of {self.limit:,} {self.unit} ({verdict})"


def _registry() -> list[Any]:
    from engram import host_registry

    return list(host_registry.registry())


def injecting_hosts() -> list[Any]:
    """Supported hosts that have a channel to the model (Windsurf has none)."""
    found = []
    for host in _registry():
        events = (host.runtime.get("events") or {}).values()
        if host.supported and not all(e.get("no_model_channel") for e in events if e):
            found.append(host)
    return found


def fits(card: Card, settings: Mapping[str, Any], names: "list[str] | None" = None) -> list[HostFit]:
    """The card against each injecting host's budget (or only the hosts in `names`)."""
    from engram.budget import measure
    from engram.hook import _budget
    from engram.render import Item, body_block

    block = body_block(Item(card.id, card.title, card.card, card.body, card.priority, 0))
    result = []
    for host in injecting_hosts():
        if names is not None and host.name not in names:
            continue
        unit, limit = _budget(host.runtime, settings)
        result.append(HostFit(host.name, unit, limit, measure(block, unit)))
    return result


def linked_hosts(project_root: Path, inspected: Iterable[Any] | None = None, *,
                 injecting_only: bool = True) -> list[str]:
    """Hosts with engram's entries in the project's or the user's config (any state but
    `not linked`), by default only those memory reaches, for checks that only matter where
    memory is delivered (`injecting_only=False`: Windsurf too). `inspected`: the health.inspect
    rows of this project a caller already has (doctor), read instead of the config files."""
    hosts = injecting_hosts() if injecting_only else \
        [host for host in _registry() if host.supported]
    if inspected is not None:
        linked = {row.host for row in inspected
                  if row.scope in ("project", "global") and _is_linked(row)}
        return [host.name for host in hosts if host.install and host.name in linked]
    from engram.installer import health, ops

    names = []
    rules = ops.path_rules(project_root)
    for host in hosts:
        if not host.install:
            continue
        for global_scope in (False, True):
            try:
                row = health.inspect(host, project_root, global_scope, rules)
            except Exception:  # noqa: BLE001 - an odd config must not break lint
                continue
            if _is_linked(row):
                names.append(host.name)
                break
    return names


def _is_linked(row: Any) -> bool:
    """Does a health.inspect row show engram's entries in the config, in any state (current,
    stale, broken)? A config engram cannot read says nothing either way."""
    return bool(row.state not in ("not linked", "unreadable"))
