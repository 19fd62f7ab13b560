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
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .corpus import EFFORTS, MODELS, SESSION_NAME
from .generator import Generator

__all__ = ["EFFORTS", "MODELS", "SESSION_NAME", "GeneratedSession", "generate_session", "parse_size"]


@dataclass(frozen=True)
class GeneratedSession:
    """What :func:`generate_session` wrote.

    ``entries`` counts entry lines (the header excluded). ``context_entries`` is the
    number of entries that become model messages when Command Code rebuilds the
    context of the leaf (format §4.4): the last compaction on the active path, the
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

    def to_json(self) -> dict[str, Any]:
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
    return round(value)


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
            gen = Generator(out, size_bytes, seed=seed, cwd=cwd, auto_compact_tokens=auto_compact_tokens,
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
