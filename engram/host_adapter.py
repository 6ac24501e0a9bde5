"""The adapter every part reads host specifics through (one frozen dataclass per host), built
from the definitions `engram.host_registry` loads. Kept apart from engram.host_registry so the
hook path, which only needs `load_host`, does not import dataclasses and typing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Host:
    name: str
    display_name: str
    aliases: tuple[str, ...]
    supported: bool
    reason: str
    runtime: Mapping[str, Any] = field(hash=False, compare=False)
    install: Mapping[str, Any] = field(hash=False, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        """Its name and aliases: what may follow `engram hook` in one of our entries."""
        return (self.name, *self.aliases)

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> "Host":
        return cls(
            name=definition["name"],
            display_name=definition.get("display_name") or definition["name"],
            aliases=tuple(definition.get("aliases") or ()),
            supported=bool(definition.get("supported", False)),
            reason=" ".join(str(definition.get("reason") or "").split()),
            runtime=definition.get("runtime") or {},
            install=definition.get("install") or {},
        )
