"""Bad input in the listing: a corrupt meta file, a transcript that does not parse, one of a newer
format, a folder that cannot be read. Every session that can be shown is shown, the damaged ones
are marked (`damaged`), and no session file is modified, through the catalog and without it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commandcode.catalog.listing import list_sessions
from commandcode.config.paths import project_dir
from helpers.cli import run_cli, snapshot
from helpers.session_files import sid, write_session


@pytest.mark.parametrize("catalog", ["on", "off"])
def test_damaged_sessions_are_listed_marked_and_untouched(home: Path, workdir: Path, catalog: str) -> None:
    write_session(workdir, sid(1), ["healthy"], when="2026-01-01T00:00:00.000Z")
    meta_broken = write_session(workdir, sid(2), ["meta broken"], when="2026-01-02T00:00:00.000Z")
    meta_broken.with_name(f"{sid(2)}.meta.json").write_bytes(b'{"title": "half')
    garbage = project_dir(workdir) / f"{sid(3)}.jsonl"
    garbage.write_bytes(b"\x00\xff\xfe not json at all\n{\"also\": broken\n")
    newer = project_dir(workdir) / f"{sid(4)}.jsonl"
    newer.write_text(json.dumps({"type": "session", "version": 99, "id": sid(4), "timestamp": "2026-01-04T00:00:00.000Z",
                                 "cwd": str(workdir)}) + "\n")
    torn = write_session(workdir, sid(5), ["torn tail"], when="2026-01-05T00:00:00.000Z")
    with torn.open("ab") as handle:
        handle.write(b'{"type":"message","id":"torn", "message": {"role"\n')
    before = snapshot(home)

    completed = run_cli(["sessions", "list", "--all", "--json"], workdir, home, COMMANDCODE_CATALOG=catalog)
    assert completed.returncode == 0, completed.stderr
    rows = {row["id"]: row for row in json.loads(completed.stdout)}
    assert set(rows) == {sid(1), sid(2), sid(3), sid(4), sid(5)}
    assert rows[sid(1)]["damaged"] is None
    assert "meta file is not a JSON object" in rows[sid(2)]["damaged"]
    assert rows[sid(2)]["first_message"] == "meta broken"
    assert "unreadable line" in rows[sid(3)]["damaged"]
    assert "version" in rows[sid(4)]["damaged"] or "newer" in rows[sid(4)]["damaged"]
    assert rows[sid(5)]["damaged"].startswith("1 unreadable line(s) skipped")
    assert rows[sid(5)]["message_count"] == 2
    warnings = completed.stderr.splitlines()
    assert any(sid(4) in line and line.startswith("warning: ") for line in warnings), warnings
    assert "Traceback" not in completed.stderr

    table = run_cli(["sessions", "list", "--all"], workdir, home, COMMANDCODE_CATALOG=catalog)
    assert table.returncode == 0 and table.stdout.count("[damaged: ") == 4, table.stdout
    after = {key: value for key, value in snapshot(home).items() if "catalog.sqlite3" not in key and "/index/" not in
             f"/{key}" and not key.startswith(("index", "locks"))}
    assert {key: value for key, value in after.items() if key in before} == \
        {key: value for key, value in before.items() if key in after}  # no session file modified or removed
    assert all(key in after for key in before if key.startswith("projects"))


@pytest.mark.parametrize("use_catalog", [True, False])
def test_a_folder_that_cannot_be_read_is_a_warning(home: Path, workdir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, use_catalog: bool) -> None:
    """Root reads every folder, so the refusal is injected where the folder is listed."""
    other = tmp_path / "other"
    other.mkdir()
    write_session(workdir, sid(1), ["here"])
    write_session(other, sid(2), ["there"])
    blocked = str(project_dir(other))
    real_scandir, real_listdir = os.scandir, os.listdir

    def refuse(function):  # type: ignore[no-untyped-def]
        def wrapper(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
            if os.fspath(path) == blocked:
                raise PermissionError(13, "Permission denied", blocked)
            return function(path, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(os, "scandir", refuse(real_scandir))
    monkeypatch.setattr(os, "listdir", refuse(real_listdir))
    errors: list[str] = []
    rows = list_sessions(workdir, all_projects=True, errors=errors, use_catalog=use_catalog)
    assert [row.id for row in rows] == [sid(1)]
    assert len(errors) == 1 and errors[0].startswith(f"{blocked}: cannot be listed (Permission denied)")


def test_no_session_leftovers_are_not_sessions(home: Path, workdir: Path) -> None:
    """`--no-session` leaves a meta and a checkpoints file without a transcript: not a session
    row (`--all` shows it as a leftover: tests/unit/catalog/test_leftovers.py)."""
    write_session(workdir, sid(1), ["real"])
    folder = project_dir(workdir)
    (folder / f"{sid(9)}.meta.json").write_text('{"entrypoint": "print"}')
    (folder / f"{sid(9)}.checkpoints.jsonl").write_text("")
    completed = run_cli(["sessions", "list", "--json"], workdir, home)
    assert [row["id"] for row in json.loads(completed.stdout)] == [sid(1)] and completed.stderr == ""
