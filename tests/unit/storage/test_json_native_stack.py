"""The native JSON encoder's walk costs no native stack per level of nesting, in any build profile.

It once recursed (one Rust frame per level, ~350 bytes optimized, several KB in a dev build), so an
editable dev build overflowed a 2 MB thread stack at 3,000 levels and killed the interpreter. Here
every container kind the encoder descends into, through every entry point, is nested to just under
the native cap (3,000 levels) inside a thread whose stack is only 256 KiB: a recursive walk cannot
fit there in either profile, the iterative one must, and must still write what `json` writes.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest

from commandcode import _native
from helpers.threads import in_thread

DEPTH = 2_990  # containers on the walk at the deepest point: under the native cap of 3,000
SMALL_STACK = 256 * 1024


class Wrapped:
    """Not JSON: `default` replaces it with a list holding the next level."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


class MyList(list):  # type: ignore[type-arg]
    pass


def unwrap(value: Any) -> Any:
    if isinstance(value, Wrapped):
        return [value.inner]
    raise TypeError(type(value).__name__)


def build(kind: str, depth: int) -> Any:
    value: Any = 0
    if kind == "default":  # a Wrapped and its replacement list are two levels
        for _ in range(depth // 2):
            value = Wrapped(value)
        return value
    for _ in range(depth // 3 if kind == "mixed" else depth):  # a "mixed" step is three levels
        value = {
            "list": lambda inner: [inner],
            "tuple": lambda inner: (inner,),
            "dict": lambda inner: {"k": inner},
            "dict subclass": lambda inner: OrderedDict(k=inner),
            "list subclass": lambda inner: MyList([inner]),
            "mixed": lambda inner: [{"k": (inner,)}],
        }[kind](value)
    return value


KINDS = ["list", "tuple", "dict", "dict subclass", "list subclass", "mixed", "default"]

# (native call, the json call it must equal); the entry record nests the value in one field.
ENTRY_POINTS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "dumps": (lambda value: _native.json_dumps(value, default=unwrap),
              lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=unwrap)),
    "dumps indented": (lambda value: _native.json_dumps(value, indent=2, separators=(",", ": "), default=unwrap),
                       lambda value: json.dumps(value, indent=2, ensure_ascii=False, default=unwrap)),
    "line": (_native.json_encode_line,
             lambda value: (json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n").encode()),
    "entry": (lambda value: _native.json_encode_entry("custom", "e1", None, "t", {"v": value}),
              lambda value: (json.dumps({"type": "custom", "id": "e1", "parentId": None, "timestamp": "t",
                                         "v": value}, separators=(",", ":"), ensure_ascii=False) + "\n").encode()),
}


def in_small_thread(call: Callable[[], Any]) -> Any:
    """`call()` in a thread with a 256 KiB stack, the recursion limit raised out of the way."""
    return in_thread(call, stack_size=SMALL_STACK, recursion_limit=100_000)


@pytest.mark.parametrize("entry_point", list(ENTRY_POINTS))
@pytest.mark.parametrize("kind", KINDS)
def test_nesting_to_the_cap_fits_a_small_thread_stack(kind: str, entry_point: str) -> None:
    if kind == "default" and entry_point in {"line", "entry"}:
        pytest.skip("json_encode_line and json_encode_entry take no default")
    native, oracle = ENTRY_POINTS[entry_point]
    depth = DEPTH - 1 if entry_point == "entry" else DEPTH  # the entry record's fields are a level
    value = build(kind, depth)
    outcome = in_small_thread(lambda: native(value))
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)  # json's own encoder recurses; the main thread's stack holds it
    try:
        expected = oracle(value)
    finally:
        sys.setrecursionlimit(old_limit)
    assert outcome == expected


@pytest.mark.parametrize("entry_point", ["dumps", "line", "entry"])
@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
def test_nesting_past_the_cap_is_a_recursion_error_in_a_small_thread(kind: str, entry_point: str) -> None:
    native, _ = ENTRY_POINTS[entry_point]
    value = build(kind, 100_000)
    assert isinstance(in_small_thread(lambda: native(value)), RecursionError)
