"""The content of synthetic sessions: vocabulary, shapes, and the text pools tool results and
replies are cut from (slices of the Python standard library's own sources, and prose made of a
fixed vocabulary), pre-escaped for JSON. Used by `generator.py`."""

from __future__ import annotations

import functools
import json
import os
import random
import sysconfig
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate

SESSION_NAME = "Long-lived synthetic session"
MODELS = ("anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "openai/gpt-5", "google/gemini-2.5-pro")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
TOOLS = ("read_file", "bash", "edit_file", "write_file")
TOOL_CUM_WEIGHTS = (45, 75, 92, 100)  # 45/30/17/8 %: ~70 % big results (reads, shell output), ~30 % confirmations
SHELL_COMMANDS = ("pytest -x -q", "git status", "git diff --stat", "ls -la src", "cargo test", "rg -n 'def parse' src")
SOURCE_DIRS = ("core", "api", "util", "cli", "tests")
WORDS = ["the", "a", "to", "of", "and", "in", "is", "for", "that", "this", "it", "with", "on", "as", "be", "we", "should", "can", "will", "function", "test", "file", "error", "module", "change", "fix", "update", "add", "remove", "call", "return", "value", "config", "path", "build", "run", "check", "case", "type", "class", "method", "import", "export", "async", "await", "promise", "buffer", "stream", "parse", "index", "branch", "session", "entry", "tree", "compaction", "summary", "context", "token", "model", "cache", "retry", "timeout", "handler", "refactor", "rename", "move", "extract", "inline", "bug", "regression", "failing", "passing", "now", "then", "because", "so", "but", "also", "already", "still", "just", "first", "next", "finally", "here", "there", "I'll", "let's", "looks", "like", "seems", "need", "want", "try", "see", "read", "edit", "write", "grep", "bash", "→", "…", "é", "✓"]
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
        escaped = [(e + "\\n").encode() for e in esc_lines]
        prefixes += [b"%d: " % k for k in range(len(prefixes) + 1, len(lines) + 1)]
        pool.add([len(line) + 1 for line in lines], escaped, [prefix + line for prefix, line in zip(prefixes, escaped)])
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
