"""Deterministic generator of realistic, long-lived Command Code v3 sessions.

This module owns the synthetic transcripts used by ``benches/`` and by the
``commandcode bench`` command. It writes ``<out_dir>/<session id>.jsonl`` in the
Command Code v3 format (header ``{type:"session",version:3,id,timestamp,cwd}``, then
entries that each start with ``type,id,parentId,timestamp``) and, optionally, the
``<session id>.meta.json`` sidecar (2-space JSON, no trailing newline).

Shape of a session (the same bytes for the same seed, size and Python installation):

* turns: a short user prompt, then 1 to 20 assistant steps, each with tool calls
  (``read_file``, ``bash``, ``edit_file``, ``write_file``) answered by one user message
  of ``tool_result`` blocks, closed by a longer assistant reply;
* tool results: about 70 % are big (2-50 KB, log-uniform slices of the Python
  standard library's own sources, so nothing is downloaded), the rest are short
  confirmations or errors;
* rewinds: about 2 % of turns move the leaf back to the parent of a recent user
  prompt, so the next turn becomes a sibling branch; half of them write a
  ``branch_summary`` first;
* compactions: with ``auto_compact_tokens`` (default 150 000) a compaction is
  appended before any model call once the live context exceeds that many estimated
  tokens (chars / 4), as Command Code's auto-compaction does; with
  ``auto_compact_tokens=None``, ``compactions`` of them are spaced evenly by bytes.
  Each keeps about 30 000 tokens verbatim, starting at a user prompt
  (``firstKeptEntryId``), and is skipped when it would summarize fewer than 5
  messages;
* a few ``model_change``, ``effort_change``, ``label``, ``custom``,
  ``custom_message`` entries, and a ``session_info`` as the first entry.

The leaf of the active branch is always the last line. Lines are streamed to disk
through a large buffer; memory stays flat in the output size (the generator keeps
only the tail of the active branch that a rewind or a compaction can reach).

CLI::

    python -m commandcode.bench.generate --out DIR --size 100MB --seed 1

prints the :class:`GeneratedSession` as JSON.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import math
import os
import random
import re
import sys
import sysconfig
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

__all__ = ["GeneratedSession", "generate_session", "parse_size"]


@dataclass(frozen=True)
class GeneratedSession:
    """What :func:`generate_session` wrote.

    ``entries`` counts entry lines (the header excluded). ``context_entries`` is the
    number of entries that become model messages when Command Code rebuilds the
    context of the leaf (format §2.5): the last compaction on the active path, the
    path entries from its ``firstKeptEntryId`` up to it, then everything after it;
    only ``message``, ``compaction``, ``branch_summary`` and ``custom_message``
    entries count. ``compactions`` and ``rewinds`` count every one in the file,
    on any branch.
    """

    path: Path
    session_id: str
    bytes: int
    entries: int
    leaf_id: str
    active_path_length: int
    context_entries: int
    compactions: int
    rewinds: int

    def to_json(self) -> dict:
        """A JSON-ready dict (``path`` as a string)."""
        d = asdict(self)
        d["path"] = str(self.path)
        return d


# --------------------------------------------------------------------------- sizes

_SIZE_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*")
_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "ki": 2**10, "kib": 2**10,
    "m": 10**6, "mb": 10**6, "mi": 2**20, "mib": 2**20,
    "g": 10**9, "gb": 10**9, "gi": 2**30, "gib": 2**30,
    "t": 10**12, "tb": 10**12, "ti": 2**40, "tib": 2**40,
}


def parse_size(text: str) -> int:
    """Parse a byte size such as ``"10MB"``, ``"1GB"``, ``"2GiB"``, ``"500k"`` or ``"4096"``.

    Decimal units are powers of 1000 (``MB`` = 10**6), binary units powers of 1024
    (``MiB`` = 2**20); units are case-insensitive and a fraction is allowed
    (``"1.5GB"``). Raises :class:`ValueError` with a one-line message otherwise.
    """
    m = _SIZE_RE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"invalid size {text!r}: expected a number with an optional unit, e.g. 500k, 10MB, 2GiB")
    unit = m.group(2).lower()
    if unit not in _UNITS:
        raise ValueError(f"invalid size {text!r}: unknown unit {m.group(2)!r} "
                         "(use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    value = float(m.group(1)) * _UNITS[unit]
    if value != value or value in (float("inf"), float("-inf")):  # 400 digits overflow a float
        raise ValueError(f"invalid size {text!r}: too large")
    return int(round(value))


# --------------------------------------------------------------------------- content

SESSION_NAME = "Long-lived synthetic session"
MODELS = ("anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "openai/gpt-5", "google/gemini-2.5-pro")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
TOOLS = ("read_file", "bash", "edit_file", "write_file")
TOOL_CUM_WEIGHTS = (45, 75, 92, 100)  # 45/30/17/8 %: ~70 % big results (reads, shell output), ~30 % confirmations
SHELL_COMMANDS = ("pytest -x -q", "git status", "git diff --stat", "ls -la src", "cargo test", "rg -n 'def parse' src")
SOURCE_DIRS = ("core", "api", "util", "cli", "tests")
WORDS = (
    "the a to of and in is for that this it with on as be we should can will "
    "function test file error module change fix update add remove call return "
    "value config path build run check case type class method import export "
    "async await promise buffer stream parse index branch session entry tree "
    "compaction summary context token model cache retry timeout handler "
    "refactor rename move extract inline bug regression failing passing now "
    "then because so but also already still just first next finally here there "
    "I'll let's looks like seems need want try see read edit write grep bash "
    "→ … é ✓"
).split()
FILE_WORDS = WORDS[:40]

KEEP_TOKENS = 30_000        # Command Code keeps ~30k tokens verbatim after a compaction
MIN_SUMMARIZED = 5          # ... and summarizes only when that covers >= 5 messages
REWIND_PROB = 0.02          # per turn
CLOSE_TURN_BYTES = 16_384   # near the target, close the turn instead of another tool step
TRIM_AT = 4096              # active-path entries kept in memory before trimming the head
TRIM_KEEP = 256             # ... always keeping at least this many (labels, rewinds)
CORPUS_BYTES = 8 << 20
PROSE_BYTES = 1 << 20

# kinds of active-path entries
PROMPT, TOOL, ASSISTANT, COMPACTION, BRANCH, CUSTOM_MESSAGE, OTHER = range(7)
MESSAGE_KINDS = frozenset((PROMPT, TOOL, ASSISTANT))
CONTEXT_KINDS = frozenset((PROMPT, TOOL, ASSISTANT, COMPACTION, BRANCH, CUSTOM_MESSAGE))

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

# A text in an entry may be a reference "\x00<n>\x00" to the n-th pre-escaped text of the
# line being built; the encoder writes it as \u0000<n>\u0000 and write_line splices it in.
_REF = "\x00%d\x00"
_REF_SPLIT = "\\u0000"


class _Pool:
    """Text units (source lines, sentences), each ending in its separator, pre-escaped for JSON.

    Unit i has ``starts[i + 1] - starts[i]`` characters; its JSON-escaped form (no quotes,
    UTF-8) is ``esc[esc_at[i]:esc_at[i + 1]]``, and an optional second rendering (numbered
    source lines) is ``alt[alt_at[i]:alt_at[i + 1]]``. A slice of whole units therefore costs
    one bytes copy and no JSON or UTF-8 encoding, which is what makes the generator fast.
    Built with :meth:`add` (one call per source file keeps the peak memory low), then
    :meth:`finish`.
    """

    def __init__(self) -> None:
        self.starts, self.esc_at, self.alt_at = array("q", [0]), array("q", [0]), array("q", [0])
        self.esc_chunks: list[bytes] = []
        self.alt_chunks: list[bytes] = []
        self.esc = self.alt = b""
        self.units = self.chars = 0

    def add(self, lengths: Iterable[int], esc: list[bytes], alt: list[bytes] | None = None) -> None:
        # each offset table ends with the running total, where the new units start
        self.starts.extend(accumulate(lengths, initial=self.starts.pop()))
        self.esc_at.extend(accumulate(map(len, esc), initial=self.esc_at.pop()))
        self.esc_chunks.append(b"".join(esc))
        if alt is not None:
            self.alt_at.extend(accumulate(map(len, alt), initial=self.alt_at.pop()))
            self.alt_chunks.append(b"".join(alt))

    def finish(self) -> _Pool:
        self.esc, self.alt = b"".join(self.esc_chunks), b"".join(self.alt_chunks)
        self.esc_chunks, self.alt_chunks = [], []
        self.units = len(self.starts) - 1
        self.chars = self.starts[-1]
        return self


def _stdlib_sources() -> Iterator[str]:
    """About 8 MiB of the running interpreter's standard library sources, file by file, in a fixed order."""
    root = sysconfig.get_paths()["stdlib"]
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    text = f.read().replace("\x00", "")  # NUL marks references (_REF)
            except (OSError, UnicodeDecodeError):
                continue
            if not text:
                continue
            yield text if text.endswith("\n") else text + "\n"
            total += len(text)
            if total >= CORPUS_BYTES:
                return
    if total < 64 << 10:  # few stdlib sources (an embedded interpreter): add generated code
        yield "".join("    value_%d = compute(%d)  # %s\n" % (i, i, WORDS[i % len(WORDS)]) for i in range(40_000))


@functools.lru_cache(maxsize=1)
def _code_pool() -> _Pool:
    """Source lines; ``alt`` renders each with its line number in its file, as read_file does."""
    pool = _Pool()
    prefixes: list[bytes] = []  # b"1: ", b"2: ", ...
    for text in _stdlib_sources():
        lines = text.split("\n")
        lines.pop()  # text ends with a newline
        # One encoder call per file, with NUL marking the line breaks. A file holding the literal
        # text backslash-u0000 splits into too many pieces; it is escaped line by line instead.
        esc_lines = _encode(text[:-1].replace("\n", "\x00"))[1:-1].split(_REF_SPLIT)
        if len(esc_lines) != len(lines):
            esc_lines = [_encode(line)[1:-1] for line in lines]
        esc_lines = [(e + "\\n").encode() for e in esc_lines]
        prefixes += [b"%d: " % k for k in range(len(prefixes) + 1, len(lines) + 1)]
        pool.add([len(line) + 1 for line in lines], esc_lines, list(map(bytes.__add__, prefixes, esc_lines)))
    return pool.finish()


@functools.lru_cache(maxsize=1)
def _prose_pool() -> _Pool:
    """About 1 MiB of word salad: sentences ending in ". " or "?" or a paragraph break."""
    rng = random.Random(0x5E55)
    words = rng.choices(WORDS, k=PROSE_BYTES // 5)
    raw: list[str] = []
    i = 0
    while i < len(words) - 18:
        k = 6 + int(rng.random() * 13)
        s = " ".join(words[i:i + k])
        i += k
        end = ("." if rng.random() < 0.9 else "?") + ("\n\n" if rng.random() < 0.08 else " ")
        raw.append(s[0].upper() + s[1:] + end)
    # WORDS hold no quote, backslash or control character: a newline is all there is to escape
    pool = _Pool()
    pool.add(map(len, raw), [s.replace("\n", "\\n").encode() for s in raw])
    return pool.finish()


def _mix32(x: int) -> int:
    """A bijection on 32-bit integers (lowbias32), so distinct counters give distinct ids."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


# --------------------------------------------------------------------------- generator

class _Generator:
    """Writes one session; the state needed for rewinds and compactions is kept small."""

    def __init__(self, out, target: int, *, seed: int, cwd: str, auto_compact_tokens: int | None,
                 compactions: int, progress: Callable[[int], None] | None):
        self.out = out
        self.target = target
        self.rng = random.Random(seed)
        self.cwd = cwd
        self.auto_compact_tokens = auto_compact_tokens
        self.compactions_wanted = compactions
        self.progress = progress
        self.progress_every = max(1 << 20, min(1 << 24, target // 100))
        self.next_progress = self.progress_every
        self.code_pool = _code_pool()
        self.prose_pool = _prose_pool()
        r = self.rng
        self.id_key = (r.getrandbits(32), r.getrandbits(32))
        self.id_counter = 0
        self.t_ms = 1735689600000 + r.randrange(10**9)
        self.iso_second = -1
        self.iso_prefix = ""
        self.bytes = 0
        self.entries = 0
        self.rewinds = 0
        self.compactions = 0
        self.model = MODELS[0]
        self.effort: str | None = None
        self.live_chars = 0  # estimated context size (chars) of the active branch
        self.refs: list[bytes] = []  # pre-escaped texts referenced by the line being built
        self.ref_chars = 0  # their unescaped length
        # Active branch, root..leaf, as (id, kind, chars); path[k] is active-path entry base+k.
        self.path: list[tuple[str, int, int]] = []
        self.base = 0
        # (absolute index of a compaction on the active path, absolute index of its first kept entry)
        self.comps: list[tuple[int, int]] = []
        self.session_id = ""

    # ---- primitives ------------------------------------------------------
    def uuid4(self) -> str:
        x = self.rng.getrandbits(122)  # 128 bits less the version (4) and variant (0b10) bits
        return "%08x-%04x-4%03x-%04x-%012x" % (
            x >> 90, (x >> 74) & 0xFFFF, (x >> 62) & 0xFFF, 0x8000 | ((x >> 48) & 0x3FFF), x & 0xFFFFFFFFFFFF)

    def randint(self, lo: int, hi: int) -> int:
        """lo..hi inclusive; cheaper than random.randint, which the hot path calls a lot."""
        return lo + int(self.rng.random() * (hi - lo + 1))

    def new_id(self) -> str:
        n = self.id_counter
        self.id_counter = n + 1
        return "%08x" % (_mix32((n + self.id_key[0]) & 0xFFFFFFFF) ^ self.id_key[1])

    def tick(self, lo: int = 200, hi: int = 30_000) -> None:
        self.t_ms += self.randint(lo, hi)

    def iso(self) -> str:
        t = self.t_ms
        sec = t // 1000
        if sec != self.iso_second:
            self.iso_second = sec
            self.iso_prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        return "%s.%03dZ" % (self.iso_prefix, t % 1000)

    def logu(self, lo: float, hi: float) -> int:
        return int(math.exp(self.rng.uniform(math.log(lo), math.log(hi))))

    def span(self, pool: _Pool, n: int) -> tuple[int, int]:
        """Units a..b-1 of pool: about n chars, at least one unit, from a random place."""
        starts = pool.starts
        a = min(bisect_right(starts, int(self.rng.random() * max(1, pool.chars - n - 1))), pool.units - 1)
        b = max(a + 1, bisect_right(starts, starts[a] + n) - 1)
        return a, b

    def ref(self, escaped: bytes, chars: int) -> str:
        self.refs.append(escaped)
        self.ref_chars += chars
        return _REF % (len(self.refs) - 1)

    def code(self, n: int) -> str:
        """About n chars of real source, whole lines (a reference to pre-escaped text)."""
        p = self.code_pool
        a, b = self.span(p, n)
        return self.ref(p.esc[p.esc_at[a]:p.esc_at[b] - 2], p.starts[b] - p.starts[a] - 1)

    def numbered_code(self, n: int) -> str:
        """Like code(), as read_file shows it: a header, then numbered lines."""
        p = self.code_pool
        a, b = self.span(p, n)
        head = b"Read 1/1 file, %d line%s\\n" % (b - a, b"" if b - a == 1 else b"s")
        return self.ref(head + p.alt[p.alt_at[a]:p.alt_at[b] - 2], p.alt_at[b] - p.alt_at[a] + len(head))

    def prose(self, n: int) -> str:
        """About n chars of prose, whole sentences (a reference to pre-escaped text)."""
        p = self.prose_pool
        a, b = self.span(p, n)
        return self.ref(p.esc[p.esc_at[a]:p.esc_at[b]].rstrip(b" \\n"), p.starts[b] - p.starts[a] - 1)

    def source_path(self) -> str:
        r = self.rng
        return "%s/src/%s/%s.py" % (self.cwd, r.choice(SOURCE_DIRS), r.choice(FILE_WORDS))

    def write_line(self, obj: dict) -> None:
        """Write obj as one JSON line, splicing in the pre-escaped texts it references."""
        line = _encode(obj)
        refs = self.refs
        if refs:
            parts = line.split(_REF_SPLIT)
            if len(parts) != 2 * len(refs) + 1:
                raise RuntimeError("generated text references do not match the line")
            pieces = [p.encode() if i % 2 == 0 else refs[int(p)] for i, p in enumerate(parts)]
            pieces.append(b"\n")
            b = b"".join(pieces)
            self.refs = []
        else:
            b = (line + "\n").encode()
        self.out.write(b)
        self.bytes += len(b)
        if self.progress is not None and self.bytes >= self.next_progress:
            self.next_progress = self.bytes + self.progress_every
            self.progress(self.bytes)

    def entry(self, etype: str) -> dict:
        """A new child of the leaf; texts made until emit() count towards its context size."""
        self.tick()
        self.refs = []
        self.ref_chars = 0
        return {"type": etype, "id": self.new_id(), "parentId": self.path[-1][0] if self.path else None,
                "timestamp": self.iso()}

    def emit(self, obj: dict, kind: int) -> None:
        chars = self.ref_chars if kind in CONTEXT_KINDS else 0
        self.write_line(obj)
        self.entries += 1
        self.path.append((obj["id"], kind, chars))
        self.live_chars += chars

    def remaining(self) -> int:
        return self.target - self.bytes

    # ---- entries ---------------------------------------------------------
    def header(self) -> None:
        self.session_id = self.uuid4()
        self.write_line({"type": "session", "version": 3, "id": self.session_id, "timestamp": self.iso(),
                         "cwd": self.cwd})

    def session_info(self) -> None:
        e = self.entry("session_info")
        e["name"] = SESSION_NAME
        self.emit(e, OTHER)

    def user(self) -> None:
        r = self.rng
        e = self.entry("message")
        n = self.logu(20, 2000)
        text = self.prose(n) if r.random() < 0.7 else self.prose(n // 2) + "\n```\n" + self.code(n // 2) + "\n```"
        e["message"] = {"role": "user", "content": [{"type": "text", "text": text}],
                        "meta": {"source": "user", "createdAt": self.t_ms - self.randint(1, 150),
                                 "messageId": self.uuid4()}}
        self.emit(e, PROMPT)

    def usage(self, out_chars: int) -> dict:
        r = self.rng
        inp = 6000 + self.live_chars // 4  # system prompt + tools + the live context
        return {"inputTokens": inp, "outputTokens": max(1, out_chars // 4),
                "cacheReadTokens": self.randint(inp // 2, inp) if r.random() < 0.9 else 0,
                "cacheWriteTokens": self.randint(0, 5000)}

    def tool_input(self, name: str) -> dict:
        r = self.rng
        if name == "read_file":
            return {"file_path": self.source_path()}
        if name == "bash":
            return {"command": r.choice(SHELL_COMMANDS)}
        if name == "edit_file":
            return {"file_path": self.source_path(), "old_string": self.code(self.logu(40, 1500)),
                    "new_string": self.code(self.logu(40, 1500))}
        return {"file_path": self.source_path(), "content": self.code(self.logu(200, 8000))}

    def tool_output(self, name: str, inp: dict) -> str:
        r = self.rng
        path = inp.get("file_path")
        if r.random() < 0.04:  # Command Code has no is_error: errors are plain text
            return "Error: " + self.prose(self.logu(40, 400))
        if name == "edit_file":
            return "The file %s has been updated successfully." % path
        if name == "write_file":
            return ("File created successfully at: %s" if r.random() < 0.3
                    else "The file %s has been updated successfully.") % path
        if r.random() < 0.1:
            return self.prose(self.logu(40, 800))
        # a big result; near the target it shrinks so the file lands close to the size asked for
        n = min(self.logu(2048, 51200), max(512, self.remaining() // 3))
        return self.numbered_code(n) if name == "read_file" else self.code(n)

    def assistant(self, final: bool) -> list[tuple[str, str, dict]]:
        r = self.rng
        e = self.entry("message")
        content: list[dict] = []
        calls: list[tuple[str, str, dict]] = []
        anthropic = self.model.startswith("anthropic/")
        if r.random() < 0.5:
            t = self.prose(self.logu(100, 4000))
            nb = self.randint(48, 256)
            sig = base64.b64encode(r.getrandbits(nb * 8).to_bytes(nb, "big")).decode() if anthropic else ""
            content.append({"type": "thinking", "thinking": t, "signature": sig})
        if final or r.random() < 0.5:
            t = self.prose(self.logu(200, 6000) if final else self.logu(50, 1500))
            if final and r.random() < 0.4:
                t += "\n```python\n" + self.code(self.logu(200, 3000)) + "\n```\n"
            content.append({"type": "text", "text": t})
        if not final:
            for _ in range(1 if r.random() < 0.8 else self.randint(2, 3)):
                name = r.choices(TOOLS, cum_weights=TOOL_CUM_WEIGHTS)[0]
                inp = self.tool_input(name)
                cid = ("toolu_01%022x" % r.getrandbits(88)) if anthropic else ("call_%024x" % r.getrandbits(96))
                content.append({"type": "tool_use", "id": cid, "name": name, "input": inp})
                calls.append((cid, name, inp))
        e["message"] = {"role": "assistant", "content": content,
                        "meta": {"source": "model", "createdAt": self.t_ms - self.randint(0, 20),
                                 "messageId": self.uuid4()}}
        e["usage"] = self.usage(self.ref_chars)
        e["model"] = self.model
        if self.effort:
            e["effort"] = self.effort
        self.emit(e, ASSISTANT)
        return calls

    def tool_results(self, calls: list[tuple[str, str, dict]]) -> None:
        # one user message holds the tool_result blocks of one assistant step; no createdAt
        e = self.entry("message")
        blocks = [{"type": "tool_result", "tool_use_id": cid,
                   "content": [{"type": "text", "text": self.tool_output(name, inp)}]}
                  for cid, name, inp in calls]
        e["message"] = {"role": "user", "content": blocks, "meta": {"source": "tool", "messageId": self.uuid4()}}
        self.emit(e, TOOL)

    def setting_change(self) -> None:
        r = self.rng
        if r.random() < 0.5:
            self.model = r.choice(MODELS)
            e = self.entry("model_change")
            e["model"] = self.model
        else:
            self.effort = r.choice(EFFORTS)
            e = self.entry("effort_change")
            e["effort"] = self.effort
        self.emit(e, OTHER)

    def label(self) -> None:
        target = self.rng.choice(self.path[-200:])[0]
        e = self.entry("label")
        e["targetId"] = target
        e["label"] = "checkpoint-%d" % self.randint(1, 999)
        self.emit(e, OTHER)

    def custom(self) -> None:
        r = self.rng
        if r.random() < 0.5:  # mod state, never sent to the model
            e = self.entry("custom")
            e["customType"] = "todo-mod"
            e["data"] = {"todos": [self.prose(60) for _ in range(self.randint(1, 6))]}
            self.emit(e, OTHER)
        else:  # a mod's message, part of the context
            e = self.entry("custom_message")
            e["customType"] = "reminder-mod"
            e["content"] = [{"type": "text", "text": self.prose(self.logu(60, 1500))}]
            e["display"] = r.random() < 0.5
            self.emit(e, CUSTOM_MESSAGE)

    def compaction(self, auto: bool) -> None:
        """Keep ~KEEP_TOKENS of the newest context, starting at a user prompt; summarize the rest."""
        path, base = self.path, self.base
        lo = self.comps[-1][0] - base if self.comps else -1  # context before lo is already summarized
        budget = KEEP_TOKENS * 4
        acc, idx = 0, len(path)
        while idx - 1 > lo and acc < budget:
            idx -= 1
            acc += path[idx][2]
        if idx == len(path):
            return
        j = idx
        while j > lo and path[j][1] != PROMPT:
            j -= 1
        if j <= lo:  # no prompt at or before idx: take the next one
            j = idx
            while j < len(path) and path[j][1] != PROMPT:
                j += 1
        if sum(1 for p in path[lo + 1:j] if p[1] in MESSAGE_KINDS) < MIN_SUMMARIZED:
            return
        first_kept = path[j][0] if j < len(path) else ""
        r = self.rng
        e = self.entry("compaction")
        e["summary"] = "## Goal\n%s\n\n## Progress\n%s\n\n## Key files\n%s\n\n## Resume point\n%s" % (
            self.prose(300), "\n".join("- " + self.prose(80) for _ in range(self.randint(3, 15))),
            "\n".join("- %s/src/core/%s.py" % (self.cwd, w) for w in r.sample(FILE_WORDS, 4)),
            self.prose(400))
        e["firstKeptEntryId"] = first_kept
        e["tokensBefore"] = self.live_chars // 4
        if auto:
            e["fromMod"] = True
        self.emit(e, COMPACTION)
        ci = len(path) - 1
        kept = j if first_kept else ci
        self.comps.append((ci + base, kept + base))
        self.compactions += 1
        self.live_chars = sum(p[2] for p in path[kept:])

    def rewind(self) -> None:
        """/rewind: the leaf moves to the parent of a recent user prompt; the next entry records it."""
        path, base, comps = self.path, self.base, self.comps
        floor = max(1, len(path) - 60)
        # Cutting off compaction k needs the context start of compaction k-1 still in memory.
        k = len(comps) - 1
        while k >= 0 and comps[k][0] - base >= floor:
            prev_start = comps[k - 1][1] if k >= 1 else 0
            if prev_start < base:
                floor = comps[k][0] - base + 1
                break
            k -= 1
        cands = [i for i in range(floor, len(path)) if path[i][1] == PROMPT]
        if not cands:
            return
        r = self.rng
        i = r.choice(cands)
        old_leaf = path[-1][0]
        self.live_chars -= sum(p[2] for p in path[i:])
        del path[i:]
        if comps and comps[-1][0] - base >= i:  # a compaction was cut off: recount the live context
            while comps and comps[-1][0] - base >= i:
                comps.pop()
            start = comps[-1][1] - base if comps else 0
            self.live_chars = sum(p[2] for p in path[start:])
        self.rewinds += 1
        if r.random() < 0.5:
            e = self.entry("branch_summary")
            e["fromId"] = old_leaf
            e["summary"] = "The user explored a different branch before coming back here. " + \
                self.prose(self.logu(200, 2000))
            if r.random() < 0.5:
                e["details"] = {"readFiles": ["%s/src/core/%s.py" % (self.cwd, w) for w in r.sample(FILE_WORDS, 3)],
                                "modifiedFiles": ["%s/src/api/%s.py" % (self.cwd, w) for w in r.sample(FILE_WORDS, 2)]}
            self.emit(e, BRANCH)

    def trim(self) -> None:
        """Forget the head of the active path that no rewind or compaction can reach any more."""
        path, comps = self.path, self.comps
        if len(path) < TRIM_AT or not comps:
            return
        keep = comps[-2][1] if len(comps) >= 2 and comps[-2][1] >= self.base else comps[-1][1]
        drop = min(keep - self.base, len(path) - TRIM_KEEP)
        if drop >= TRIM_AT // 4:
            del path[:drop]
            self.base += drop

    # ---- driver ----------------------------------------------------------
    def before_model_call(self) -> None:
        limit = self.auto_compact_tokens
        if limit and self.live_chars // 4 > limit:
            self.compaction(auto=True)

    def turn(self) -> None:
        r = self.rng
        if self.entries > 50 and r.random() < REWIND_PROB:
            self.rewind()
        if r.random() < 0.02:
            self.setting_change()
        if r.random() < 0.01:
            self.label()
        if r.random() < 0.01:
            self.custom()
        self.user()
        for _ in range(min(20, 1 + int(r.expovariate(0.25)))):
            if self.remaining() < CLOSE_TURN_BYTES:
                break
            self.before_model_call()
            self.tool_results(self.assistant(final=False))
        self.before_model_call()
        self.assistant(final=True)

    def run(self) -> None:
        self.header()
        self.session_info()  # like `-n NAME`: session_info is the first entry
        self.setting_change()
        evenly = not self.auto_compact_tokens and self.compactions_wanted > 0
        step = self.target / (self.compactions_wanted + 1) if evenly else 0.0
        next_compact = step
        while self.bytes < self.target:
            self.trim()
            if evenly and self.bytes >= next_compact:
                self.compaction(auto=False)
                next_compact += step
            self.turn()  # always ends with the assistant reply that is the leaf
        if self.progress is not None:
            self.progress(self.bytes)

    def context_entries(self) -> int:
        """Entries that become messages in the leaf's context (format §2.5)."""
        path = self.path
        if self.comps:
            ci, kept = (x - self.base for x in self.comps[-1])
            ctx = [path[ci]] + path[kept:ci] + path[ci + 1:]
        else:
            ctx = path
        return sum(1 for p in ctx if p[1] in CONTEXT_KINDS)


# --------------------------------------------------------------------------- API

def generate_session(out_dir: Path, size_bytes: int, *, seed: int = 1, cwd: str = "/home/dev/bigproj",
                     auto_compact_tokens: int | None = 150_000, compactions: int = 6, sidecars: bool = True,
                     progress: Callable[[int], None] | None = None) -> GeneratedSession:
    """Write a synthetic session of about ``size_bytes`` bytes into ``out_dir``.

    The transcript is ``<out_dir>/<session id>.jsonl``; it ends with the first whole
    turn that reaches ``size_bytes`` (a few KB over, at most). With ``sidecars``,
    ``<session id>.meta.json`` holds the title and model. ``auto_compact_tokens=None``
    switches from auto-compaction to ``compactions`` evenly spaced ones.
    ``progress(bytes_written)`` is called every 1-16 MiB and once at the end.
    The output depends only on the arguments and on the Python installation (whose
    standard library sources are the content corpus).
    """
    if size_bytes < 1:
        raise ValueError(f"size must be positive, got {size_bytes}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / (".generating-%d-%d.jsonl" % (os.getpid(), seed))
    try:
        with open(tmp, "wb", buffering=1 << 22) as out:
            gen = _Generator(out, size_bytes, seed=seed, cwd=cwd, auto_compact_tokens=auto_compact_tokens,
                             compactions=compactions, progress=progress)
            gen.run()
        path = out_dir / (gen.session_id + ".jsonl")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sidecars:
        meta = json.dumps({"title": SESSION_NAME, "model": gen.model}, ensure_ascii=False, indent=2)
        (out_dir / (gen.session_id + ".meta.json")).write_text(meta, encoding="utf-8")
    return GeneratedSession(path=path, session_id=gen.session_id, bytes=gen.bytes, entries=gen.entries,
                            leaf_id=gen.path[-1][0], active_path_length=gen.base + len(gen.path),
                            context_entries=gen.context_entries(), compactions=gen.compactions,
                            rewinds=gen.rewinds)


def main(argv: list[str] | None = None) -> int:
    """``python -m commandcode.bench.generate``: write one session and print its summary as JSON."""
    ap = argparse.ArgumentParser(prog="python -m commandcode.bench.generate",
                                 description="Write a synthetic Command Code v3 session (deterministic per seed).")
    ap.add_argument("--out", required=True, type=Path, help="output folder; the file is <session id>.jsonl")
    ap.add_argument("--size", required=True, type=parse_size, help="target size, e.g. 10MB, 1GB, 2GiB, 500k")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cwd", default="/home/dev/bigproj", help="header cwd, also the root of tool paths")
    ap.add_argument("--auto-compact-tokens", type=int, default=150_000,
                    help="compact when the live context exceeds this many estimated tokens (0: evenly spaced)")
    ap.add_argument("--compactions", type=int, default=6, help="evenly spaced compactions when auto-compaction is 0")
    ap.add_argument("--no-sidecars", action="store_true", help="do not write <id>.meta.json")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()

    def report(n: int) -> None:
        print("\r%.0f MB written, %.0f MB/s " % (n / 1e6, n / 1e6 / max(1e-9, time.perf_counter() - t0)),
              end="", file=sys.stderr, flush=True)

    show = not a.quiet and sys.stderr.isatty()
    s = generate_session(a.out, a.size, seed=a.seed, cwd=a.cwd, auto_compact_tokens=a.auto_compact_tokens or None,
                         compactions=a.compactions, sidecars=not a.no_sidecars, progress=report if show else None)
    if show:
        print(file=sys.stderr)
    print(json.dumps(s.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
