"""The native JSON encoder (`_native.json_dumps`, `json_encode_line`, `json_encode_entry`) writes
exactly what Python's `json` encoder followed by the lone-surrogate regex wrote, for every flavour
the package uses, and fails with the same exception types.

The oracle is the pure-Python `jsonfmt` code the native encoder replaced, kept here verbatim in
behaviour: compact JSONL lines, 2-space pretty sidecars, and the CLI's `--json` outputs
(`default=str`, NaN allowed, default separators).
"""

from __future__ import annotations

import enum
import json
import math
import random
import re
import struct
import sys
import threading
from collections import OrderedDict, namedtuple
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commandcode import _native
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from commandcode.storage import jsonfmt
from helpers.threads import in_thread

# ---------------------------------------------------------------------------------------------
# The oracle: what jsonfmt and present/console.py (then cli/output.py) did with Python's json module.

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escape(text: str) -> str:
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


ORACLES = {
    "line": lambda value: _escape(json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                                   allow_nan=False).encode(value)),
    "pretty": lambda value: _escape(json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False).encode(value)),
    "cli_pretty": lambda value: _escape(json.dumps(value, indent=2, ensure_ascii=False, default=str)),
    "cli_line": lambda value: _escape(json.dumps(value, ensure_ascii=False, default=str)),
}

NATIVE = {
    "line": _native.json_dumps,
    "pretty": lambda value: _native.json_dumps(value, indent=2, separators=(",", ": ")),
    "cli_pretty": lambda value: _native.json_dumps(value, indent=2, separators=(",", ": "), allow_nan=True,
                                                   default=str),
    "cli_line": lambda value: _native.json_dumps(value, separators=(", ", ": "), allow_nan=True, default=str),
}

PACKAGE = {  # the package's own entry points, once switched to the native encoder
    "line": jsonfmt.dumps_line,
    "pretty": jsonfmt.dumps_pretty,
}


def outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", function(value)
    except (TypeError, ValueError, RecursionError) as error:
        return "error", type(error)


def assert_same(value: Any, flavours: Any = ORACLES) -> None:
    for flavour in flavours:
        expected = outcome(ORACLES[flavour], value)
        assert outcome(NATIVE[flavour], value) == expected, flavour
        if flavour in PACKAGE:
            assert outcome(PACKAGE[flavour], value) == expected, flavour
        if flavour == "line":
            line = outcome(jsonfmt.encode_line, value)
            assert line == (expected if expected[0] == "error" else ("ok", (expected[1] + "\n").encode())), flavour


# ---------------------------------------------------------------------------------------------
# Values: subclasses whose own __repr__/__str__ json must not call.


class MyStr(str):
    def __str__(self) -> str:
        return "not this"


class MyInt(int):
    def __repr__(self) -> str:
        return "not this"


class MyFloat(float):
    def __repr__(self) -> str:
        return "not this"


class MyList(list):  # type: ignore[type-arg]
    pass


class MyDict(dict):  # type: ignore[type-arg]
    pass


class ReversedItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # json reads a dict subclass through .items()
        return list(reversed(list(super().items())))


class Colour(enum.IntEnum):
    RED = 1


class Mode(str, enum.Enum):
    FAST = "fast"


Point = namedtuple("Point", "x y")

SPECIAL_CHARACTERS = ['"', "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f", "\x80", "\x9f",
                      "é", "€", "😀", "\u2028", "\u2029", "\ufeff", "\ud7ff", "\ue000", "\ud000", "\uffff",
                      "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"]
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 1e16, 1e15, 9007199254740993.0, 1e-4, 1e-5, 5e-324, 2.2250738585072014e-308,
                  1.7976931348623157e308, 123456789.123, 1e22, 1e21, 1e-7]

texts = st.text(st.one_of(st.sampled_from(SPECIAL_CHARACTERS), st.characters(exclude_categories=())), max_size=30)
strings = st.one_of(texts, texts.map(MyStr), st.just(Mode.FAST))
ints = st.one_of(st.integers(), st.integers(min_value=-2**70, max_value=2**70), st.integers().map(MyInt),
                 st.just(Colour.RED), st.sampled_from([2**63 - 1, 2**63, -2**63, -2**63 - 1, 10**40]))
floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(SPECIAL_FLOATS),
                   st.floats(allow_nan=False, allow_infinity=False).map(MyFloat))
non_finite = st.sampled_from([math.nan, math.inf, -math.inf, MyFloat("nan")])
scalars = st.one_of(strings, ints, floats, st.booleans(), st.none())
keys = st.one_of(texts, texts.map(MyStr), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                 st.booleans(), st.none(), st.just(Colour.RED))


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.lists(children, max_size=5).map(MyList),
        st.dictionaries(keys, children, max_size=5),
        st.dictionaries(keys, children, max_size=5).map(MyDict),
        st.dictionaries(keys, children, max_size=5).map(ReversedItems),
        st.dictionaries(texts, children, max_size=5).map(OrderedDict),
        st.tuples(children, children).map(lambda pair: Point(*pair)),
    )


values = st.recursive(scalars, containers, max_leaves=40)
# Values json cannot write as they are: non-finite floats, unsupported types, bad keys.
troublesome_leaves = st.one_of(scalars, non_finite, st.sampled_from([b"bytes", {1, 2}, frozenset(), 1j]))
troublesome = st.recursive(troublesome_leaves, lambda children: st.one_of(
    containers(children), st.dictionaries(st.sampled_from([(1, 2), frozenset()]), children, min_size=1, max_size=2),
    st.dictionaries(st.sampled_from([math.nan, math.inf]), children, min_size=1, max_size=1)), max_leaves=15)

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(values)
def test_every_flavour_writes_what_python_json_writes(value: Any) -> None:
    assert_same(value)


@FAST
@given(troublesome)
def test_values_json_refuses_fail_with_the_same_exception_type(value: Any) -> None:
    assert_same(value)


@FAST
@given(st.dictionaries(texts, values, max_size=6), texts, texts, st.one_of(st.none(), texts), texts)
def test_an_entry_record_is_the_merged_dict_as_one_line(fields: dict[str, Any], entry_type: str, entry_id: str,
                                                         parent: str | None, timestamp: str) -> None:
    fields = {key: value for key, value in fields.items() if key not in {"type", "id", "parentId", "timestamp"}}
    merged = {"type": entry_type, "id": entry_id, "parentId": parent, "timestamp": timestamp, **fields}
    expected = (ORACLES["line"](merged) + "\n").encode()
    assert _native.json_encode_entry(entry_type, entry_id, parent, timestamp, fields) == expected


@pytest.mark.parametrize("flavour", list(ORACLES))
@pytest.mark.parametrize("value", [
    {}, [], (), "", {"a": []}, [{}], {"": ""}, [[[]]], {"k": {"k": {}}}, [1, [2, [3, {"x": (4, 5)}]]],
    # One dict per key type that compares equal to another (True == 1, -0.0 == False == 0), so
    # none of them is folded into an earlier key and left untested.
    {1: "int", 1.5: "float", None: "none", 10**30: "big"}, {True: "true", False: "false"}, {-0.0: "minus zero"},
    {MyInt(7): 1, MyFloat(2.5): 2, Colour.RED: 3, MyStr("k"): MyStr("v")},
    "".join(SPECIAL_CHARACTERS), {"".join(SPECIAL_CHARACTERS): "".join(reversed(SPECIAL_CHARACTERS))},
    SPECIAL_FLOATS, [True, False, None, 0, -1, 2**63, -(2**64), MyInt(-3)], "x" * 100_000 + "\x00\ud800",
])
def test_fixed_cases(flavour: str, value: Any) -> None:
    assert_same(value, [flavour])


def test_floats_read_as_repr_across_the_whole_range() -> None:
    generator = random.Random(20260101)
    for _ in range(200_000):
        value = struct.unpack("<d", generator.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            assert _native.json_dumps(value) == repr(value)
    for power in range(-1074, 1024):  # powers of two, where the rounding interval is lopsided
        for value in (2.0**power, math.nextafter(2.0**power, 0), math.nextafter(2.0**power, math.inf)):
            if math.isfinite(value):
                assert _native.json_dumps(value) == repr(value), value
    for power in range(40, 60):  # exact ties between equally short digit strings
        for eighths in range(1, 8):
            value = 2.0**power + eighths / 8 * 2.0 ** (power - 52)
            assert _native.json_dumps(value) == repr(value), value
    for exponent in range(-330, 310):
        for mantissa in (1, 2, 5, 9.999999999999998, 1.2345678901234567):
            value = float(f"{mantissa}e{exponent}")
            if math.isfinite(value):
                assert _native.json_dumps(value) == repr(value), value


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1, math.nan], {"k": math.inf}, {math.nan: 1}])
def test_non_finite_floats(value: Any) -> None:
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        _native.json_dumps(value)
    assert_same(value)


def test_error_messages_match_json() -> None:
    with pytest.raises(TypeError, match="^Object of type set is not JSON serializable$"):
        _native.json_dumps({"k": {1}})
    with pytest.raises(TypeError, match=r"^keys must be str, int, float, bool or None, not tuple$"):
        _native.json_dumps({(1, 2): 3})
    with pytest.raises(ValueError, match="^Out of range float values are not JSON compliant: -inf$"):
        _native.json_dumps([-math.inf])


def test_circular_references_are_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    cycle: dict[str, Any] = {}
    cycle["self"] = [cycle]
    for value in (loop, cycle, {"a": loop}):
        for flavour in ORACLES:
            with pytest.raises(ValueError, match="^Circular reference detected$"):
                NATIVE[flavour](value)
            assert_same(value, [flavour])
    shared = [1]
    assert_same([shared, shared, {"s": shared}])  # the same object twice is not a cycle


def test_a_default_that_returns_its_argument_is_a_cycle() -> None:
    def same(value: Any) -> Any:
        return value

    with pytest.raises(ValueError, match="^Circular reference detected$"):
        _native.json_dumps(object(), default=same)
    with pytest.raises(ValueError):
        json.dumps(object(), default=same)


def test_default_is_called_for_unsupported_values_and_its_result_encoded() -> None:
    def default(value: Any) -> Any:
        return {"set": sorted(value)} if isinstance(value, set) else str(value)

    value = {"a": {3, 1, 2}, "b": [b"x", Path("/p")], "c": 1j}
    assert _native.json_dumps(value, default=default) == json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                                                                     default=default)


def test_a_default_that_mutates_the_dict_being_encoded_does_not_break_the_walk() -> None:
    value: dict[str, Any] = {"a": object(), "b": 2}

    def default(_: Any) -> str:
        value.clear()
        return "gone"

    assert _native.json_dumps(dict(value), default=default) == '{"a":"gone","b":2}'
    value = {"a": object(), "b": 2}
    assert _native.json_dumps(value, default=default) == '{"a":"gone","b":2}'  # read from a snapshot of items


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_deep_nesting_raises_recursion_error_not_a_crash() -> None:
    for flavour in ORACLES:
        with pytest.raises(RecursionError):
            NATIVE[flavour](nested(200_000))
    deep = {"k": nested(300)}
    assert_same(deep)
    with pytest.raises(RecursionError):
        _native.json_encode_line(nested(200_000))


def test_deep_nesting_under_a_raised_recursion_limit_stays_within_the_stack() -> None:
    """With the limit raised far up, the native cap (3,000 levels) still stops the walk, and a
    thread with a 2 MB stack survives it."""
    def run() -> tuple[RecursionError | None, int]:
        caught = None
        try:
            _native.json_dumps(nested(1_000_000))
        except RecursionError as error:
            caught = error
        return caught, _native.json_dumps(nested(2_990), indent=2).count("[")

    outcome = in_thread(run, stack_size=2 * 1024 * 1024, recursion_limit=10_000_000)
    assert isinstance(outcome, tuple), outcome
    assert isinstance(outcome[0], RecursionError) and outcome[1] == 2_991


def test_lone_surrogates_in_keys_and_values_become_escapes() -> None:
    value = {"\ud800key": ["\udfff", "a\ud83d\ude00b", "😀"]}
    line = _native.json_encode_line(value)
    assert line == b'{"\\ud800key":["\\udfff","a\\ud83d\\ude00b","\xf0\x9f\x98\x80"]}\n'
    assert json.loads(line) == {"\ud800key": ["\udfff", "a\U0001f600b", "😀"]}  # a parser pairs the two halves


def test_the_cli_output_functions_use_the_cli_flavours(capsys: pytest.CaptureFixture[str]) -> None:
    from commandcode.present import console as output

    value = {"n": math.nan, "p": Path("/x"), "s": "\ud800", "l": [1, 2.5]}
    output.print_json(value)
    output.print_json_line(value)
    assert capsys.readouterr().out == ORACLES["cli_pretty"](value) + "\n" + ORACLES["cli_line"](value) + "\n"


# ---------------------------------------------------------------------------------------------
# The writer


def test_entries_written_natively_read_back_identically(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path / "project", "0a0a0a0a-0000-4000-8000-000000000000")
    generator = random.Random(7)
    written: dict[str, dict[str, Any]] = {}
    with SessionWriter(files, "/work") as writer:
        for turn in range(20):
            text = "".join(generator.choice(SPECIAL_CHARACTERS[:-6] + ["a", " "]) for _ in range(200))
            user = {"role": "user", "content": [{"type": "text", "text": f"{turn} {text}"}]}
            assistant = {"role": "assistant", "content": [{"type": "text", "text": text[::-1]},
                                                          {"type": "tool_use", "id": f"c{turn}", "name": "t",
                                                           "input": {"n": turn, "f": turn / 7, "deep": [[{}]]}}]}
            written[writer.append_message(user)] = {"message": user}
            written[writer.append_message(assistant, model="m", usage={"in": 1, "out": 2.5})] = {
                "message": assistant, "usage": {"in": 1, "out": 2.5}, "model": "m"}
            written[writer.append_entry("custom", {"customType": "x", "data": {"": None, "k": [True, -0.0]}})] = {
                "customType": "x", "data": {"": None, "k": [True, -0.0]}}
            writer.commit()
    session = open_session(files.transcript)
    entries = session.read_entries(list(written))
    raw_lines = files.transcript.read_bytes().splitlines(keepends=True)[1:]
    assert len(entries) == len(raw_lines) == len(written)
    for entry, raw, (entry_id, fields) in zip(entries, raw_lines, written.items(), strict=True):
        assert list(entry) == ["type", "id", "parentId", "timestamp", *fields]
        assert entry["id"] == entry_id and {key: entry[key] for key in fields} == fields
        assert raw == (ORACLES["line"](json.loads(raw)) + "\n").encode()  # byte-identical to the old encoder
