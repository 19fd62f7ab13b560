"""Small immutable value objects for the modules an embedder imports to open a session.

Owns: `Frozen`, the base of `SessionFiles`, `Context` and `TreeRow`. `dataclasses` would do the
same, but importing it (with `inspect`, `ast`, `dis`, `tokenize`) costs more than a warm open of
a 1 GB session takes, so the hot path keeps to this: fields in `__slots__`, equality, hashing and
a repr from them, and no assignment after `__init__`. Core, beside `errors.py` rather than in
`storage/`: a warm open imports nothing else of `storage/`, and a package costs it its own import
(~0.3M instructions, measured with callgrind).
"""


class Frozen:
    """Fields are the subclass's `__slots__`, set once in `__init__` through `_set`."""

    __slots__: "tuple[str, ...]" = ()

    def _set(self, **fields: object) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _fields(self) -> "tuple[object, ...]":
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot delete {name!r})")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({inner})"
