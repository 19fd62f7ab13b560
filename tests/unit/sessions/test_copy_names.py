"""Names stay unique when a named session is forked or cloned without a name: the copy would
otherwise carry the source's `session_info` and two sessions of the project would answer to one
name (`-r NAME` then names neither). The copy is `<name> (fork)` / `<name> (clone)`, numbered when
taken, and not marked as renamed by the user."""

from __future__ import annotations

import json
from pathlib import Path

from commandcode.agent import branching
from commandcode.catalog.listing import resolve_session
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from helpers.trees import branched_session


def _named(workdir: Path, name: str) -> SessionFiles:
    files, _ids = branched_session(workdir)
    with SessionWriter(files, str(workdir)) as writer:
        writer.append_entry("session_info", {"name": name})
        writer.commit(force=True)
    return files


def test_unnamed_copies_of_a_named_session_get_names_of_their_own(home: Path, workdir: Path) -> None:
    files = _named(workdir, "payments")
    source_before = files.transcript.read_bytes()
    first = branching.fork_session(files, workdir)
    second = branching.fork_session(files, workdir)
    clone = branching.clone_session(files, workdir)
    names = [open_session(result.files.transcript).name for result in (first, second, clone)]
    assert names == ["payments (fork)", "payments (fork) (2)", "payments (clone)"]
    for result, name in zip((first, second, clone), names):
        meta = json.loads(result.files.meta.read_text())
        assert meta["title"] == name and "userRenamed" not in meta
    assert files.transcript.read_bytes() == source_before
    assert open_session(files.transcript).name == "payments"
    assert resolve_session("payments", workdir).session_id == files.session_id
    # the clone's name entry closes its chain, so its context is the source's
    assert open_session(clone.files.transcript).context().messages == \
        open_session(files.transcript).context().messages


def test_an_unnamed_session_copies_without_a_name(home: Path, workdir: Path) -> None:
    files, _ids = branched_session(workdir)
    for result in (branching.fork_session(files, workdir), branching.clone_session(files, workdir)):
        assert open_session(result.files.transcript).name is None
        assert "title" not in json.loads(result.files.meta.read_text())


def test_copies_of_copies_do_not_pile_suffixes_up(home: Path, workdir: Path) -> None:
    files = _named(workdir, "my-feature")
    fork = branching.fork_session(files, workdir)
    second_fork = branching.fork_session(files, workdir)
    clone_of_fork = branching.clone_session(fork.files, workdir)
    fork_of_second = branching.fork_session(second_fork.files, workdir)
    names = [open_session(result.files.transcript).name for result in (fork, second_fork, clone_of_fork, fork_of_second)]
    assert names == ["my-feature (fork)", "my-feature (fork) (2)", "my-feature (clone)", "my-feature (fork) (3)"]
    assert branching.copy_title("release (2)", "fork") == "release (2) (fork)"  # a user's own number stays
    assert branching.copy_title("(fork)", "clone") == "(fork) (clone)"  # nothing would be left: kept whole
