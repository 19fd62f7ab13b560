"""The catalog warm-up `-c` starts (`catalog/warmup.py`): the listing that follows waits for it
and summarizes nothing twice; a catalog it cannot use changes nothing of what `-c` does."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from commandcode.catalog import index, listing, warmup
from helpers.session_files import sid, write_session


@pytest.fixture(autouse=True)
def _no_warmup_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "_thread", None)
    monkeypatch.setattr(warmup, "_warmed", set(), raising=False)


def test_the_listing_after_a_warmup_summarizes_nothing_again(home: Path, workdir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(3):
        write_session(workdir, sid(number + 1), [f"prompt {number}"])
    summarized: list[str] = []
    real = index.summarize_paths

    def counting(paths: list[str], *args: object, **kwargs: object) -> object:
        summarized.extend(os.path.basename(path) for path in paths)
        return real(paths, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "summarize_paths", counting)
    warmup.begin(str(workdir))
    rows = listing.list_sessions(workdir)
    assert warmup._thread is not None and not warmup._thread.is_alive()  # the listing waited for it
    assert sorted(row.id for row in rows) == [sid(1), sid(2), sid(3)]
    assert sorted(summarized) == sorted(f"{sid(number + 1)}.jsonl" for number in range(3))  # each once


def test_a_warmup_starts_once_and_not_when_the_catalog_is_off(home: Path, workdir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    warmup.begin(str(workdir))  # no sessions folder yet: nothing to warm, and no data dir made
    assert warmup._thread is None and not home.exists()
    write_session(workdir, sid(1), ["one"])
    monkeypatch.setenv("COMMANDCODE_CATALOG", "off")
    warmup.begin(str(workdir))
    assert warmup._thread is None
    monkeypatch.delenv("COMMANDCODE_CATALOG")
    warmup.begin(str(workdir))
    first = warmup._thread
    warmup.begin(str(workdir))
    assert first is not None and warmup._thread is first
    warmup.settle()


def test_continue_with_an_unusable_catalog_warns_at_most_once_and_runs(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(7), ["the one to continue"], meta={"entrypoint": "print"})
    (home / "catalog.sqlite3").mkdir()  # not a database: the warm-up and the listing both meet it
    env = {**os.environ, "COMMANDCODE_HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "commandcode", "-c", "-p", "hello"], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "catalog cannot be used" in line]
    assert len(warnings) <= 1 and "Traceback" not in done.stderr, done.stderr
    assert (home / "catalog.sqlite3").is_dir()  # left as it was
    transcript = next(Path(home, "projects").rglob(f"{sid(7)}.jsonl"))
    assert "hello" in transcript.read_text()  # the turn went into the session -c found


@pytest.mark.parametrize(("argv", "warms"), [
    (["-c"], True),
    (["--continue", "-p", "hello"], True),
    (["-p", "hello", "--output-format", "json", "-c"], True),
    (["-c", "--model=offline", "-n", "work"], True),
    (["-p", "-c"], False),  # the prompt is "-c"
    (["-n", "-c"], False),  # the session's name is "-c"
    (["--model", "--continue"], False),
    (["-c", "-w"], False),  # moves into a worktree first
    (["-c", "--worktree=feature"], False),
    (["sessions", "list", "-c"], False),  # a subcommand's
    (["-c", "--", "-c"], False),
    (["-c", "--help"], False),
    (["-c", "-n"], False),  # malformed: the launch fails by itself
])
def test_the_warmup_starts_for_exactly_the_launches_that_continue_here(argv: list[str], warms: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line asks the launch flags' table (`launcher.flags.continues_here`), not a
    guess from the tokens (which warmed the catalog for `-p -c`, whose `-c` is the prompt)."""
    import commandcode.cli as cli

    started: list[str] = []
    monkeypatch.setattr(warmup, "begin", started.append)
    cli._continue_ahead(argv)
    assert bool(started) is warms


def _counting_refreshes(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every `index.refresh` of the catalog, by the folders it was given."""
    from commandcode.catalog import cached

    calls: list[list[str]] = []
    real = cached.refresh

    def counting(catalog: object, folders: list[str], **kwargs: object) -> object:
        calls.append(list(folders))
        return real(catalog, folders, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cached, "refresh", counting)
    monkeypatch.setattr(index, "refresh", counting)
    return calls


def test_continue_after_its_warmup_checks_the_files_no_second_time(home: Path, workdir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.agent.runtime import AgentSession

    write_session(workdir, sid(1), ["an interactive one"])  # no headless session: `-c -p` lists twice
    calls = _counting_refreshes(monkeypatch)
    warmup.begin(str(workdir))
    with AgentSession.start(workdir, continue_last=True, entrypoint="print") as continued:
        assert continued.session_id == sid(1)
    assert len(calls) == 1  # the warm-up's; the two listings of the resolution took its rows
    # the hand-over is once: a later listing of the process checks the files again
    listing.list_sessions(workdir)
    assert len(calls) == 2


def test_continue_without_a_warmup_checks_the_files_once(home: Path, workdir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.agent.runtime import AgentSession

    write_session(workdir, sid(1), ["an interactive one"])
    calls = _counting_refreshes(monkeypatch)
    with AgentSession.start(workdir, continue_last=True, entrypoint="print") as continued:
        assert continued.session_id == sid(1)
    assert len(calls) == 1  # headless first, then interactive: one check for both


def test_a_session_written_after_the_warmup_is_seen_by_the_next_listing(home: Path, workdir: Path) -> None:
    write_session(workdir, sid(1), ["first"])
    warmup.begin(str(workdir))
    warmup.settle()
    write_session(workdir, sid(2), ["written after the warm-up"])
    assert sorted(row.id for row in listing.list_sessions(workdir)) == [sid(1), sid(2)]


def test_a_warmup_that_met_a_problem_hands_over_nothing(home: Path, workdir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(workdir, sid(1), ["one"])
    real = index.refresh

    def troubled(catalog: object, folders: list[str], *, problems: list[str], **kwargs: object) -> object:
        problems.append("a folder could not be listed")
        return real(catalog, folders, problems=problems, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "refresh", troubled)
    warmup.begin(str(workdir))
    assert warmup.warmed() == set()


def test_a_resolution_waits_for_the_warmup_once(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`one_refresh` takes the warm-up's folders through `warmed`, which waits for it: the
    resolution does not wait a second time first (and an inner one does not wait at all)."""
    from commandcode.catalog import cached

    write_session(workdir, sid(1), ["one"])
    waits: list[str] = []
    real = warmup.settle

    def counting() -> None:
        if threading.current_thread() is not warmup._thread:  # the warm-up's own catalog use waits for nobody
            waits.append("settle")
        real()

    monkeypatch.setattr(warmup, "settle", counting)
    warmup.begin(str(workdir))
    with cached.one_refresh():
        assert len(waits) == 1
        assert warmup._thread is not None and not warmup._thread.is_alive()  # that one wait was the whole warm-up
        assert cached._resolving == set(listing.Scope(str(workdir)).folders)  # its folders were handed over
        with cached.one_refresh():
            assert len(waits) == 1
    assert cached._resolving is None
