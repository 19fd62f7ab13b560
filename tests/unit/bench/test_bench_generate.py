"""Tests for the synthetic-session generator, ``commandcode.bench.generate``.

The module is loaded from its file so these tests run whether or not the native
extension (and so the ``commandcode`` package) is importable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from helpers.locations import REPO

BENCH_DIR = REPO / "python" / "commandcode" / "bench"


def _load_generate():
    """`commandcode.bench.generate`, loaded from its folder as a package of its own (it imports
    nothing from commandcode, so it works before the native extension is built)."""
    name = "commandcode_bench_under_test"
    if f"{name}.generate" in sys.modules:
        return sys.modules[f"{name}.generate"]
    spec = importlib.util.spec_from_file_location(name, BENCH_DIR / "__init__.py",
                                                  submodule_search_locations=[str(BENCH_DIR)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package  # dataclasses look their module up while the class is built
    spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.generate")


gen = _load_generate()

ENTRY_TYPES = {"message", "model_change", "effort_change", "compaction", "branch_summary", "custom",
               "custom_message", "label", "session_info"}
CONTEXT_TYPES = {"message", "compaction", "branch_summary", "custom_message"}
ENTRY_ID = re.compile(r"[0-9a-f]{8}\Z")
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")
LINE_START = re.compile(r'\{"type":"[a-z_]+","id":"[0-9a-f]{8}","parentId":(null|"[0-9a-f]{8}"),"timestamp":"')


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_session(path: Path) -> tuple[dict, list[dict], list[str]]:
    header = None
    entries = []
    raw = []
    with open(path, "rb") as f:
        for line in f:
            assert line.endswith(b"\n")
            text = line.decode("utf-8")
            obj = json.loads(text)
            if header is None:
                header = obj
            else:
                entries.append(obj)
                raw.append(text)
    return header, entries, raw


def context_of(entries: list[dict]) -> tuple[list[dict], list[dict]]:
    """Active path and context of the last entry, by Command Code's rules (format §4.4)."""
    by_id = {e["id"]: e for e in entries}
    path = []
    seen = set()
    cur = entries[-1]
    while cur is not None and cur["id"] not in seen:
        seen.add(cur["id"])
        path.append(cur)
        cur = by_id.get(cur["parentId"]) if cur["parentId"] else None
    path.reverse()
    last = max((i for i, e in enumerate(path) if e["type"] == "compaction"), default=None)
    if last is None:
        ctx = path
    else:
        comp = path[last]
        start = next((i for i in range(last) if path[i]["id"] == comp["firstKeptEntryId"]), None)
        ctx = [comp] + (path[start:last] if start is not None else []) + path[last + 1:]
    return path, [e for e in ctx if e["type"] in CONTEXT_TYPES]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    out = {}
    for label, size in (("2MB", 2_000_000), ("20MB", 20_000_000)):
        d = tmp_path_factory.mktemp("gen" + label)
        calls = []
        s = gen.generate_session(d, size, seed=7, progress=calls.append)
        out[label] = (s, size, calls)
    return out


# --------------------------------------------------------------------------- parse_size

@pytest.mark.parametrize("text,expected", [
    ("10MB", 10_000_000), ("1GB", 10**9), ("2GiB", 2 * 2**30), ("500k", 500_000), ("500kB", 500_000),
    ("4096", 4096), ("1.5GB", 1_500_000_000), ("10 MB", 10_000_000), ("10mib", 10 * 2**20), ("3M", 3_000_000),
    ("1KiB", 1024), ("2TB", 2 * 10**12), (" 7b ", 7), ("0", 0), (".5MB", 500_000),
])
def test_parse_size(text, expected):
    assert gen.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "10XB", "-5MB", "1e6", "MB", "10 M B", "1.2.3GB", "10MBs", None, 10])
def test_parse_size_rejects_junk(text):
    with pytest.raises(ValueError) as info:
        gen.parse_size(text)
    message = str(info.value)
    assert message and "\n" not in message


# --------------------------------------------------------------------------- determinism

def test_same_seed_same_bytes(tmp_path):
    a = gen.generate_session(tmp_path / "a", 2_000_000, seed=3)
    b = gen.generate_session(tmp_path / "b", 2_000_000, seed=3)
    c = gen.generate_session(tmp_path / "c", 2_000_000, seed=4)
    assert a.path.name == b.path.name
    assert sha256(a.path) == sha256(b.path)
    assert (a.path.with_suffix(".meta.json").read_bytes() == b.path.with_suffix(".meta.json").read_bytes())
    assert a.bytes == b.bytes and a.entries == b.entries and a.leaf_id == b.leaf_id
    assert sha256(a.path) != sha256(c.path)
    assert a.session_id != c.session_id


# --------------------------------------------------------------------------- file shape

@pytest.mark.parametrize("label", ["2MB", "20MB"])
def test_session_file_is_valid(sessions, label):
    s, size, _ = sessions[label]
    assert s.path.name == s.session_id + ".jsonl"
    assert s.path.stat().st_size == s.bytes
    assert abs(s.bytes - size) <= 0.05 * size

    header, entries, raw = read_session(s.path)
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["type"] == "session" and header["version"] == 3
    assert header["id"] == s.session_id and UUID4.match(s.session_id)
    assert ISO_MS.match(header["timestamp"]) and header["cwd"] == "/home/dev/bigproj"
    assert len(entries) == s.entries

    seen: set[str] = set()
    for e, text in zip(entries, raw, strict=True):
        assert e["type"] in ENTRY_TYPES
        assert list(e)[:4] == ["type", "id", "parentId", "timestamp"]
        assert LINE_START.match(text), text[:120]
        assert ENTRY_ID.match(e["id"]) and e["id"] not in seen
        assert e["parentId"] is None or e["parentId"] in seen
        assert ISO_MS.match(e["timestamp"])
        seen.add(e["id"])
    assert entries[0]["type"] == "session_info" and entries[0]["parentId"] is None
    timestamps = [e["timestamp"] for e in entries]
    assert timestamps == sorted(timestamps)

    # the leaf of the active branch is the last line, and the summary agrees with a reader
    assert entries[-1]["id"] == s.leaf_id
    last = entries[-1]
    assert last["type"] == "message" and last["message"]["role"] == "assistant"
    path, ctx = context_of(entries)
    assert s.active_path_length == len(path)
    assert s.context_entries == len(ctx)
    types = Counter(e["type"] for e in entries)
    assert s.compactions == types["compaction"]
    assert s.rewinds >= types["branch_summary"]


def test_entries_follow_the_format(sessions):
    s, _, _ = sessions["20MB"]
    _, entries, _ = read_session(s.path)
    by_id = {e["id"]: e for e in entries}
    tool_uses = {}
    big = small = 0
    for e in entries:
        t = e["type"]
        if t == "message":
            m = e["message"]
            assert m["role"] in ("user", "assistant") and isinstance(m["content"], list)
            assert UUID4.match(m["meta"]["messageId"])
            if m["role"] == "assistant":
                assert m["meta"]["source"] == "model" and isinstance(m["meta"]["createdAt"], int)
                assert set(e["usage"]) == {"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"}
                assert isinstance(e["model"], str)
                for block in m["content"]:
                    assert block["type"] in ("thinking", "text", "tool_use")
                    if block["type"] == "tool_use":
                        tool_uses[block["id"]] = block["name"]
            elif m["meta"]["source"] == "tool":
                assert "createdAt" not in m["meta"]
                parent = by_id[e["parentId"]]
                ids = [b["id"] for b in parent["message"]["content"] if b["type"] == "tool_use"]
                assert [b["tool_use_id"] for b in m["content"]] == ids
                for block in m["content"]:
                    n = len(block["content"][0]["text"].encode())
                    big += n >= 2048
                    small += n < 2048
            else:
                assert m["meta"]["source"] == "user"
                assert [b["type"] for b in m["content"]] == ["text"]
        elif t == "compaction":
            assert isinstance(e["summary"], str) and isinstance(e["tokensBefore"], int)
            assert e["firstKeptEntryId"] == "" or e["firstKeptEntryId"] in by_id
            kept = by_id.get(e["firstKeptEntryId"])
            assert kept is None or kept["message"]["meta"]["source"] == "user"
        elif t == "branch_summary":
            assert e["fromId"] in by_id and isinstance(e["summary"], str)
        elif t == "label":
            assert e["targetId"] in by_id and isinstance(e["label"], str)
        elif t == "model_change":
            assert e["model"] in gen.MODELS
        elif t == "effort_change":
            assert e["effort"] in gen.EFFORTS
        elif t == "custom":
            assert e["customType"] and "data" in e
        elif t == "custom_message":
            assert e["customType"] and isinstance(e["display"], bool) and e["content"]
        elif t == "session_info":
            assert e["name"] == gen.SESSION_NAME
    assert 0.6 <= big / (big + small) <= 0.8  # ~70 % big tool results
    types = Counter(e["type"] for e in entries)
    assert types["compaction"] >= 5 and types["branch_summary"] >= 1
    assert all(e.get("fromMod") is True for e in entries if e["type"] == "compaction")
    children = Counter(e["parentId"] for e in entries)
    assert max(children.values()) >= 2  # rewinds made sibling branches


def test_meta_sidecar(sessions):
    s, _, _ = sessions["2MB"]
    meta_path = s.path.parent / (s.session_id + ".meta.json")
    text = meta_path.read_text(encoding="utf-8")
    assert not text.endswith("\n")
    meta = json.loads(text)
    assert text == json.dumps(meta, indent=2, ensure_ascii=False)
    assert meta["title"] == gen.SESSION_NAME and meta["model"] in gen.MODELS
    _, entries, _ = read_session(s.path)
    assert entries[-1]["model"] == meta["model"]


def test_progress_is_reported(sessions):
    s, _, calls = sessions["20MB"]
    assert len(calls) >= 5
    assert calls == sorted(calls) and calls[-1] == s.bytes


def test_evenly_spaced_compactions_and_no_sidecar(tmp_path):
    s = gen.generate_session(tmp_path, 5_000_000, seed=2, auto_compact_tokens=None, compactions=4,
                             sidecars=False, cwd="/srv/other")
    assert not list(tmp_path.glob("*.meta.json"))
    assert [p.name for p in tmp_path.iterdir()] == [s.path.name]
    header, entries, _ = read_session(s.path)
    assert header["cwd"] == "/srv/other"
    offsets = []
    pos = len(json.dumps(header, separators=(",", ":")).encode()) + 1
    for e in entries:
        if e["type"] == "compaction":
            offsets.append(pos / s.bytes)
            assert "fromMod" not in e
        pos += len(json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()) + 1
    assert 3 <= len(offsets) <= 4 and s.compactions == len(offsets)
    for k, at in enumerate(offsets, 1):
        assert abs(at - k / 5) < 0.1
    path, ctx = context_of(entries)
    assert (s.active_path_length, s.context_entries) == (len(path), len(ctx))


def test_small_sizes_and_bad_size(tmp_path):
    s = gen.generate_session(tmp_path, 1_000_000, seed=1)
    assert abs(s.bytes - 1_000_000) <= 50_000
    tiny = gen.generate_session(tmp_path / "tiny", 1000, seed=1)
    _, entries, _ = read_session(tiny.path)
    assert entries[-1]["id"] == tiny.leaf_id
    with pytest.raises(ValueError):
        gen.generate_session(tmp_path, 0)


def test_cli_prints_the_summary(tmp_path, capsys):
    assert gen.main(["--out", str(tmp_path), "--size", "1MB", "--seed", "5", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"path", "session_id", "bytes", "entries", "leaf_id", "active_path_length",
                        "context_entries", "compactions", "rewinds"}
    assert Path(out["path"]).stat().st_size == out["bytes"]
