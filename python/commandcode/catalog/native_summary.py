"""Listing rows of many transcripts from the Rust core's one pass over them (`_native.listing_rows_of`).

`summarize_paths(paths)` gives each transcript's `SessionSummary` and content fingerprint. The
core scans every file in parallel (the GIL released, every core), through its index sidecar when
the transcript is `SIDECAR_FROM_BYTES` or more (so a big session is summarized from its sidecar
in O(1) next time, and only its appended bytes after an append), and reads back by offset the
first visible user text and the last prompt. Python adds what lives outside the transcript: the
meta sidecar's fields and the file's times. No searchable text is read here.

A transcript the core cannot summarize exactly goes through the Python reader instead
(`summary.summarize(open_session(...))`): a legacy v1/v2 file (which opening migrates, as
before), one whose first or last prompt `serde_json` cannot parse, one that cannot be opened
(its damaged row then says why in the reader's words). Both paths give the same row.
"""

from __future__ import annotations

import os

from ..config.env import index_enabled
from ..errors import CommandcodeError
from ..storage.ids import iso_from_ms, parse_iso
from .summary import SessionSummary, damaged_summary, meta_damage, meta_fields, summarize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

SIDECAR_FROM_BYTES = 1 << 20
"""A smaller transcript scans in less time than writing (and fsyncing) its index sidecar takes."""

Summarized = tuple[SessionSummary, str]  # the row and the transcript's fingerprint ("" unknown)


def _sidecar(path: str, size: int) -> str | None:
    """The index sidecar to summarize `path` through (None: a plain scan)."""
    if size < SIDECAR_FROM_BYTES or not index_enabled():
        return None
    sidecar = _sidecar_path(path)
    if not os.path.isdir(os.path.dirname(sidecar)):
        from ..storage.durable import ensure_dir

        try:
            ensure_dir(os.path.dirname(sidecar))
        except OSError:
            return None
    return sidecar


def names_of_files(paths: list[str]) -> list[tuple[str | None, str | Literal[False] | None] | BaseException]:
    """(header cwd, latest `session_info` name, or False: undecided) of each transcript, from its
    index sidecar when that describes it as it is, else read from its ends
    (`_native.names_of_files`; the name checks use it through `names.py`). Nothing is written."""
    from .._native import names_of_files as native_names

    items: list[tuple[str, str | None]] = []
    for path in paths:
        try:
            big = os.stat(path).st_size >= SIDECAR_FROM_BYTES
        except OSError:
            big = False  # the native call reports it
        items.append((path, _sidecar_path(path) if big and index_enabled() else None))
    return native_names(items)


def _sidecar_path(path: str) -> str:
    from ..sessions.files import SessionFiles
    from ..sessions.reader import index_path_for

    return str(index_path_for(SessionFiles.for_transcript(path)))


def summarize_paths(paths: list[str], stats: list[os.stat_result] | None = None,
                    metas: set[str] | None = None) -> list[Summarized]:
    """`(row, fingerprint)` of each transcript, in order; never raises for one bad file (its row
    is a damaged one). A caller that has just stat-ed the transcripts and their meta sidecars (a
    refresh) passes the `stats` and the meta sidecar paths present (`metas`), so they are not
    read twice."""
    from .._native import listing_rows_of

    items: list[tuple[str, str | None]] = []
    known: list[os.stat_result | None] = []
    for number, path in enumerate(paths):
        if stats is not None:
            stat: os.stat_result | None = stats[number]
        else:
            try:
                stat = os.stat(path)
            except OSError:
                stat = None
        known.append(stat)
        size = stat.st_size if stat is not None else 0
        items.append((path, _sidecar(path, size) if size >= SIDECAR_FROM_BYTES else None))
    results = listing_rows_of(items) if items else []
    if metas is None:
        metas = _metas_present({os.path.dirname(path) for path in paths})
    return [_row(path, stat, result, metas) for path, stat, result in zip(paths, known, results)]


def _metas_present(folders: set[str]) -> set[str] | None:
    """The meta sidecars in these folders (one directory read each), so a session without one
    costs no failed open; None when a folder cannot be listed (every meta is then tried)."""
    present: set[str] = set()
    for folder in folders:
        try:
            present.update(os.path.join(folder, name) for name in os.listdir(folder or ".") if name.endswith(META))
        except OSError:
            return None
    return present


META = ".meta.json"


def _row(path: str, stat: os.stat_result | None, native: object, metas: set[str] | None) -> Summarized:
    if not isinstance(native, dict) or native["format"] in ("v1", "v2") or native["first_message"] is False \
            or native["last_prompt"] is False:
        return python_row(path), str(native.get("fingerprint", "")) if isinstance(native, dict) else ""
    name = os.path.basename(path)
    session_id = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    meta_path = os.path.join(os.path.dirname(path), session_id + META)
    meta: dict[str, Any] = {}
    damaged = None
    if metas is None or meta_path in metas:
        from pathlib import Path

        from ..sessions.meta import read_meta

        meta = read_meta(Path(meta_path))
        damaged = meta_damage(meta, Path(meta_path))
    size, mtime = (stat.st_size, stat.st_mtime) if stat is not None else (0, 0.0)
    birth = getattr(stat, "st_birthtime", None)
    header = native["header"]
    fields = meta_fields(meta, native["name"])
    if header is not None:
        created_at, cwd, recorded = header[1], header[2], True
    else:  # synthesized as the real CLI does (format §4.5)
        from ..sessions.format import header_timestamp

        created_at, cwd, recorded = header_timestamp(meta.get("createdAt"), path), os.getcwd(), False
    newest = native["last_timestamp"]
    skipped = int(native["skipped_lines"])
    if skipped:
        damaged = f"{skipped} unreadable line(s) skipped" + (f"; {damaged}" if damaged else "")
    summary = SessionSummary(
        id=session_id, created=iso_from_ms(int(birth * 1000)) if birth is not None else created_at,
        modified=newest if newest and parse_iso(newest) is not None else iso_from_ms(int(mtime * 1000)),
        message_count=int(native["message_count"]), first_message=native["first_message"], path=path, cwd=cwd,
        skipped_lines=skipped, size=size, last_prompt=native["last_prompt"], damaged=damaged, cwd_recorded=recorded,
        **fields)
    return summary, str(native["fingerprint"])


def python_row(path: str) -> SessionSummary:
    """The row of `path` through the Python reader (a damaged row when it cannot be opened)."""
    from ..sessions.reader import open_session

    try:
        return summarize(open_session(path, use_index=os.path.getsize(path) >= SIDECAR_FROM_BYTES, tail=False))
    except OSError as error:  # its words alone: the row already names the file
        reason = error.strerror or str(error)
    except CommandcodeError as error:
        message = str(error)
        reason = message[len(f"{path}: "):] if message.startswith(f"{path}: ") else message
    except Exception as error:  # a transcript must never break the listing of its neighbours
        reason = f"cannot be listed ({type(error).__name__}: {error})"
    return damaged_summary(path, reason)
