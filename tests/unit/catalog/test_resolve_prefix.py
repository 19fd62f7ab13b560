"""An id prefix is resolved from the transcripts' header lines: which of several matching sessions
is this directory's is read from each header's `cwd`, never by scanning the sessions (a 1 GB
session's scan is most of a first `sessions fork ID`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.catalog import listing
from commandcode.config.paths import project_dir
from helpers.session_files import write_session

HERE_ID = "abcdef01-0000-4000-8000-000000000001"
TWIN_ID = "abcdef02-0000-4000-8000-000000000002"


def _twins(tmp_path: Path) -> tuple[Path, Path]:
    """A directory and its slug twin (`a b` and `a_b` file their sessions in one folder)."""
    here, twin = tmp_path / "a b", tmp_path / "a_b"
    here.mkdir()
    twin.mkdir()
    assert project_dir(here) == project_dir(twin)
    return here, twin


def test_a_prefix_picks_this_directorys_session_without_scanning_any(home: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    here, twin = _twins(tmp_path)
    write_session(here, HERE_ID, ["mine"])
    write_session(here, TWIN_ID, ["the twin's"], header_cwd=str(twin))

    def scanned(path: object) -> object:
        raise AssertionError(f"{path} was scanned to resolve a prefix")

    monkeypatch.setattr(listing, "open_session", scanned)
    assert listing.resolve_session("abcdef0", here).session_id == HERE_ID
    assert listing.resolve_session("abcdef0", twin).session_id == TWIN_ID


def test_a_transcript_with_no_header_line_is_still_placed_by_its_synthesized_header(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here, twin = _twins(tmp_path)
    write_session(here, TWIN_ID, ["the twin's"], header_cwd=str(twin))
    headerless = write_session(here, HERE_ID, ["mine"])
    lines = headerless.read_bytes().splitlines(keepends=True)
    headerless.write_bytes(b"".join(lines[1:]))  # the real CLI's files before v3 had no header
    opened: list[str] = []
    real_open = listing.open_session

    def counting(path: Path) -> object:
        opened.append(Path(path).name)
        return real_open(path)

    monkeypatch.setattr(listing, "open_session", counting)
    monkeypatch.chdir(here)  # a synthesized header's cwd is the current directory
    assert listing.resolve_session("abcdef0", here).session_id == HERE_ID
    assert opened == [f"{HERE_ID}.jsonl"]  # only the one without a header line was opened
