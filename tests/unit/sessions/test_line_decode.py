"""Reading entries back (the context above all) gives exactly the objects `json.loads` gives for
their lines, whichever native path parses them: the cursor walk for the common line
(`rust/src/python/json_decode.rs`), jiter and then `json.loads` for what it declines (lone
surrogates, invalid UTF-8, integers beyond 64 bits, floats out of range, deep nesting)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commandcode.sessions.reader import open_session

HEADER = b'{"type":"session","version":3,"id":"hdr","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w"}\n'


def line(entry_id: str, parent: str | None, payload: str) -> bytes:
    """A message entry whose `message.content[0].value` is `payload`, written as is (raw JSON)."""
    parent_json = "null" if parent is None else f'"{parent}"'
    return (f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},"timestamp":"t",'
            f'"message":{{"role":"user","content":[{{"type":"text","text":"x","value":{payload}}}]}}}}\n').encode()


# Raw JSON payloads: every escape, both kinds of surrogate escape, numbers at the edges of what
# the cursor walk takes itself, nesting, duplicate keys, white space between tokens.
PAYLOADS = [
    r'"plain"', r'""', r'"tab\there \"quoted\" back\\slash \/ \b\f\r\n"', r'"\u00e9\u2028\u0000 caf\u00E9"',
    '"ünïcödé → ✓ 😀"', r'"pair \ud83d\ude00 end"', r'"lone high \ud800 here"', r'"lone low \udc00"',
    r'"high then text \ud83dx"', r'"escaped backslash then u \\u0041"',
    "0", "-0", "7", "-42", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
    "123456789012345678901234567890", "1.5", "-0.0", "1e5", "1E-7", "2.5e+3", "1e400", "-1e400",
    "0.1", "5e-324", "1.7976931348623157e308", "true", "false", "null", "[]", "{}",
    '[1, "a", [true, null], {"k": [{}]}]', '{"dup": 1, "other": 2, "dup": 3}', ' { "spaced" :  [ 1 , 2 ] } ',
    '{"k\\u0065y": "escaped key", "' + "long" * 40 + '": 1}', "[" * 200 + "]" * 200, "[" * 100 + "1" + "]" * 100,
]


def same(left: Any, right: Any) -> bool:
    """Equal values of the same types (a float's sign included), at every depth."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    return bool(left == right)


def read_back(tmp_path: Path, lines: list[bytes]) -> list[Any]:
    """The entries of a transcript of `lines`, read back by id through the context."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + b"".join(lines))
    session = open_session(path)
    return session._index.read_context()  # type: ignore[no-any-return]  # noqa: SLF001 - the native read itself


def chain(payloads: list[str]) -> list[bytes]:
    return [line(f"e{index}", f"e{index - 1}" if index else None, payload) for index, payload in enumerate(payloads)]


def test_every_payload_reads_back_as_json_loads_reads_it(home: Path, tmp_path: Path) -> None:
    lines = chain(PAYLOADS)
    entries = read_back(tmp_path, lines)
    assert len(entries) == len(lines)
    for raw, entry in zip(lines, entries, strict=True):
        assert same(entry, json.loads(raw)), raw


def test_invalid_utf8_reads_back_replaced(home: Path, tmp_path: Path) -> None:
    lines = [line("e0", None, '"bad \xff byte"').replace(b"\xc3\xbf", b"\xff")]
    [entry] = read_back(tmp_path, lines)
    assert entry["message"]["content"][0]["value"] == "bad \ufffd byte"
    assert same(entry, json.loads(lines[0].decode("utf-8", "replace")))


def test_the_context_of_a_session_is_built_from_the_same_objects(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(HEADER + b"".join(chain(PAYLOADS[:12])))
    messages = open_session(path).context().messages
    assert [message["content"][0]["value"] for message in messages] == \
        [json.loads(payload) for payload in PAYLOADS[:12]]


def test_lines_of_every_size_read_back_across_the_read_batches(home: Path, tmp_path: Path) -> None:
    # The native read takes the context's lines in batches of about 16 KiB into one buffer sized
    # for the largest batch; lines longer than a batch, shorter ones around them and lines that
    # are not adjacent in the file (a dead branch between each two) must all read back whole.
    sizes = [10, 20_000, 100, 40_000, 5_000, 16_000, 16_400, 70_000, 1, 3_000, 12_000]
    lines, path_lines = [], []
    for index, size in enumerate(sizes):
        parent = f"e{index - 1}" if index else None
        text = ("line \"%d\" é 😀\n" % index * (size // 16 + 1))[:size]
        entry = line(f"e{index}", parent, json.dumps(text))
        lines.append(entry)
        path_lines.append(entry)
        if index + 1 < len(sizes):
            lines.append(line(f"dead{index}", f"e{index}", json.dumps("off the path " * (size // 200 + 1))))
    entries = read_back(tmp_path, lines)
    assert len(entries) == len(path_lines)
    for raw, entry in zip(path_lines, entries, strict=True):
        assert same(entry, json.loads(raw)), raw[:80]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


# Each example writes the transcript anew (its sidecar is rebuilt): the fixtures need no reset.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(JSON_VALUES, min_size=1, max_size=4), ascii_only=st.booleans())
def test_any_json_value_reads_back_as_json_loads_reads_it(home: Path, tmp_path: Path, values: list[Any],
                                                        ascii_only: bool) -> None:
    lines = chain([json.dumps(value, ensure_ascii=ascii_only) for value in values])
    for raw, entry in zip(lines, read_back(tmp_path, lines), strict=True):
        assert same(entry, json.loads(raw)), raw
