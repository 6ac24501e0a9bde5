"""`@frozen`: the part of `@dataclass(frozen=True)` engram uses, without its import cost.

`import dataclasses` pulls in `inspect` and generates every method with exec: ~8 ms and ~1 ms
a class, paid by every hook process (a host runs one per prompt). These records take their
fields from the class annotations, in order, with class-level defaults; they are immutable,
compare and hash by value, and `replace()` makes a changed copy.

For the type checker `frozen` is a dataclass transform (PEP 681), so it checks constructor
calls like those of a frozen dataclass; records derive from `Record` for a typed `replace()`
and `as_dict()` (the decorator installs the real ones)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from typing_extensions import Self, dataclass_transform

    _T = TypeVar("_T")

_MISSING = object()


class Record:
    """Base of the @frozen records: what the decorator adds, declared for the type checker."""

    __slots__ = ()

    if TYPE_CHECKING:
        def replace(self, **changes: Any) -> Self: ...

        def as_dict(self) -> dict[str, Any]: ...


def _frozen(cls):  # type: ignore[no-untyped-def]
    names = tuple(name for name in cls.__dict__.get("__annotations__", {})
                  if not name.startswith("_"))
    defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__} takes {len(names)} fields, got {len(args)}")
        values = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{cls.__name__} has no field {key!r}")
            if key in values:
                raise TypeError(f"{cls.__name__} got {key!r} twice")
            values[key] = value
        for name in names:
            value = values.get(name, _MISSING)
            if value is _MISSING:
                value = defaults.get(name, _MISSING)
                if value is _MISSING:
                    raise TypeError(f"{cls.__name__} is missing field {name!r}")
            object.__setattr__(self, name, value)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def _values(self: object) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other):  # type: ignore[no-untyped-def]
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _values(self) == _values(other)

    def __hash__(self):  # type: ignore[no-untyped-def]
        return hash((cls.__name__,) + _values(self))

    def __repr__(self):  # type: ignore[no-untyped-def]
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{cls.__name__}({inner})"

    def __setattr__(self, name, value):  # type: ignore[no-untyped-def]
        raise AttributeError(f"{cls.__name__} is frozen; use replace()")

    def replace(self, **changes):  # type: ignore[no-untyped-def]
        values = {name: getattr(self, name) for name in names}
        values.update(changes)
        return cls(**values)

    def as_dict(self):  # type: ignore[no-untyped-def]
        return {name: getattr(self, name) for name in names}

    for name in names:
        if name in cls.__dict__:
            delattr(cls, name)  # defaults live in `defaults`; attributes live on instances
    cls.__init__ = __init__
    cls.__eq__ = __eq__
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        cls.__hash__ = __hash__
    cls.__repr__ = __repr__
    cls.__setattr__ = __setattr__
    cls.__delattr__ = __setattr__
    cls.replace = replace
    cls.as_dict = as_dict
    cls._fields = names
    return cls


if TYPE_CHECKING:
    @dataclass_transform(frozen_default=True, eq_default=True)
    def frozen(cls: type[_T]) -> type[_T]: ...
else:
    frozen = _frozen
