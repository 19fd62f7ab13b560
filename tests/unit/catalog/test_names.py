"""The name checks' names (`names.project_names`) are the listing's names, taken from fresh catalog
rows and, for transcripts the catalog has not seen, from the transcripts' ends only: a new fork
is not summarized whole before the next name check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.agent.naming import checked_name
from commandcode.catalog import index, names, native_summary
from commandcode.catalog.listing import list_sessions
from commandcode.config.paths import project_dir
from commandcode.errors import CommandcodeError
from helpers.session_files import sid, write_session

INFO = '{"type":"session_info","id":"info%04d","parentId":"00000002","timestamp":"2026-01-02T03:04:09.000Z","name":"%s"}\n'


def _sessions(workdir: Path, tmp_path: Path) -> None:
    named = write_session(workdir, sid(1), ["one"])
    with named.open("a") as handle:
        handle.write(INFO % (1, "first name") + INFO % (2, "Renamed Later"))
    write_session(workdir, sid(2), ["two"], meta={"title": "By Meta", "entrypoint": "print"})
    cleared = write_session(workdir, sid(3), ["three"], meta={"title": "meta title"})
    with cleared.open("a") as handle:
        handle.write(INFO % (3, "gone") + INFO % (4, " "))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_session(elsewhere, sid(4), ["four"])
    twin = write_session(workdir, sid(5), ["twin"], header_cwd=str(workdir) + "_")  # `proj_` shares the folder
    with twin.open("a") as handle:
        handle.write(INFO % (5, "the twin's"))
    legacy = project_dir(workdir) / f"{sid(6)}.jsonl"  # no v3 header first: decided by a whole summary
    legacy.write_text(json.dumps({"type": "message", "id": "x", "parentId": None, "timestamp": "2026-01-01T00:00:00Z",
                                  "message": {"role": "user", "content": "hi"}}) + "\n")


@pytest.mark.parametrize("catalog", ["on", "off"])
def test_names_are_the_listings_names(home: Path, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      catalog: str) -> None:
    monkeypatch.setenv("COMMANDCODE_CATALOG", catalog)
    _sessions(workdir, tmp_path)
    listed = {(row.id, row.name) for row in list_sessions(workdir, include_headless=True)}
    assert (sid(1), "Renamed Later") in listed and (sid(2), "By Meta") in listed and (sid(3), "meta title") in listed
    assert all(row[0] != sid(5) for row in listed)
    assert set(names.project_names(workdir)) == listed  # from the rows (catalog) or the files' ends
    for path in project_dir(workdir).glob("*.jsonl"):  # every transcript changed since: all from the files
        path.write_bytes(path.read_bytes())
    assert set(names.project_names(workdir)) == listed
    with pytest.raises(CommandcodeError, match="taken by session"):
        checked_name("renamed later", workdir)
    assert checked_name("the twin's", workdir) == "the twin's"  # another directory's session


def test_an_uncatalogued_session_is_not_summarized_for_a_name_check(home: Path, workdir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(workdir, sid(1), ["one"])
    list_sessions(workdir)  # the catalog is warm
    fork = write_session(workdir, sid(2), ["a big fork " + "z" * 2_000_000])
    with fork.open("a") as handle:
        handle.write(INFO % (1, "big (fork)"))
    summarized: list[list[str]] = []
    real = native_summary.summarize_paths
    counted = lambda paths, *rest: (summarized.append(paths), real(paths, *rest))[1]  # noqa: E731
    monkeypatch.setattr(native_summary, "summarize_paths", counted)
    monkeypatch.setattr(index, "summarize_paths", counted)
    with pytest.raises(CommandcodeError, match=sid(2)):
        checked_name("BIG (fork)", workdir)
    assert summarized == []  # its name was read from its end
    assert [row.name for row in list_sessions(workdir) if row.id == sid(2)] == ["big (fork)"]
    assert summarized == [[str(fork)]]  # the listing itself summarizes it, once


def test_a_name_check_reads_a_big_sessions_name_from_its_sidecar_only_while_it_is_true(
        home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big session named in its first lines has its name read from its index sidecar (a search
    backwards would read it whole); a sidecar that no longer describes the file, or describes
    another session, is not believed."""
    from commandcode.sessions.reader import open_session

    monkeypatch.setenv("COMMANDCODE_CATALOG", "off")  # every name comes from the files
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    big = write_session(workdir, sid(1), ["named first", "filler " + "y" * 1_500_000])
    data = big.read_bytes()
    header_end = data.index(b"\n") + 1
    big.write_bytes(data[:header_end] + (INFO % (1, "Early Name")).encode() + data[header_end:])
    other = write_session(workdir, sid(2), ["another big one " + "x" * 1_500_000])
    with other.open("a") as handle:
        handle.write(INFO % (2, "Other Name"))
    for path in (big, other):
        open_session(path)  # writes each one's index sidecar
    sidecar = native_summary._sidecar_path(str(big))
    assert Path(sidecar).is_file()
    assert dict(names.project_names(workdir)) == {sid(1): "Early Name", sid(2): "Other Name"}
    Path(sidecar).write_bytes(Path(native_summary._sidecar_path(str(other))).read_bytes())  # a lying sidecar
    assert dict(names.project_names(workdir))[sid(1)] == "Early Name"
    open_session(big)
    with big.open("a") as handle:  # renamed behind the sidecar's back
        handle.write(INFO % (3, "Renamed Behind"))
    assert dict(names.project_names(workdir))[sid(1)] == "Renamed Behind"
    assert dict(names.project_names(workdir)) == {(row.id): row.name for row in list_sessions(workdir)}
