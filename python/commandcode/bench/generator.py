"""`Generator`: writes one synthetic session line by line (see `generate.py` for the shape).

The state needed for rewinds and compactions is kept small: only the tail of the active branch
that a rewind or a compaction can reach stays in memory.
"""

from __future__ import annotations

import base64
import math
import random
import time
from bisect import bisect_right
from collections.abc import Callable
from typing import Any, BinaryIO

from .corpus import (
    _REF,
    _REF_SPLIT,
    ASSISTANT,
    BRANCH,
    CLOSE_TURN_BYTES,
    COMPACTION,
    CONTEXT_KINDS,
    CUSTOM_MESSAGE,
    EFFORTS,
    FILE_WORDS,
    KEEP_TOKENS,
    MESSAGE_KINDS,
    MIN_SUMMARIZED,
    MODELS,
    OTHER,
    PROMPT,
    REWIND_PROB,
    SESSION_NAME,
    SHELL_COMMANDS,
    SOURCE_DIRS,
    TOOL,
    TOOL_CUM_WEIGHTS,
    TOOLS,
    TRIM_AT,
    TRIM_KEEP,
    _code_pool,
    _encode,
    _mix32,
    _Pool,
    _prose_pool,
)


class Generator:
    """Writes one session; the state needed for rewinds and compactions is kept small."""

    def __init__(self, out: BinaryIO, target: int, *, seed: int, cwd: str, auto_compact_tokens: int | None,
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

    def write_line(self, obj: dict[str, Any]) -> None:
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

    def entry(self, etype: str) -> dict[str, Any]:
        """A new child of the leaf; texts made until emit() count towards its context size."""
        self.tick()
        self.refs = []
        self.ref_chars = 0
        return {"type": etype, "id": self.new_id(), "parentId": self.path[-1][0] if self.path else None,
                "timestamp": self.iso()}

    def emit(self, obj: dict[str, Any], kind: int) -> None:
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

    def usage(self, out_chars: int) -> dict[str, Any]:
        r = self.rng
        inp = 6000 + self.live_chars // 4  # system prompt + tools + the live context
        return {"inputTokens": inp, "outputTokens": max(1, out_chars // 4),
                "cacheReadTokens": self.randint(inp // 2, inp) if r.random() < 0.9 else 0,
                "cacheWriteTokens": self.randint(0, 5000)}

    def tool_input(self, name: str) -> dict[str, Any]:
        r = self.rng
        if name == "read_file":
            return {"file_path": self.source_path()}
        if name == "bash":
            return {"command": r.choice(SHELL_COMMANDS)}
        if name == "edit_file":
            return {"file_path": self.source_path(), "old_string": self.code(self.logu(40, 1500)),
                    "new_string": self.code(self.logu(40, 1500))}
        return {"file_path": self.source_path(), "content": self.code(self.logu(200, 8000))}

    def tool_output(self, name: str, inp: dict[str, Any]) -> str:
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

    def assistant(self, final: bool) -> list[tuple[str, str, dict[str, Any]]]:
        r = self.rng
        e = self.entry("message")
        content: list[dict[str, Any]] = []
        calls: list[tuple[str, str, dict[str, Any]]] = []
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

    def tool_results(self, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
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
        """Entries that become messages in the leaf's context (format §4.4)."""
        path = self.path
        if self.comps:
            ci, kept = (x - self.base for x in self.comps[-1])
            ctx = [path[ci]] + path[kept:ci] + path[ci + 1:]
        else:
            ctx = path
        return sum(1 for p in ctx if p[1] in CONTEXT_KINDS)
