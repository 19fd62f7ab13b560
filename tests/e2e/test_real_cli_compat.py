"""The real Command Code CLI (`command-code` 1.64.0 from npm, on Node 22) and commandcode, both
ways, on one throwaway HOME: the real CLI runs offline (`--local-only`, a BYOK provider whose
`baseURL` is the stub OpenAI-compatible server on 127.0.0.1, `tasteLearning` off, its own network
namespace), so the messages it sends the stub on a resume are exactly the context it rebuilt
from the files; we compare them with ours."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from helpers.cli import run_cli, run_ok
from helpers.npm_programs import Programs
from helpers.real_cli import (
    RealCli,
    keys,
    our_context,
    real_tui,
    same_context,
    screen_text,
    sent_context,
    shared_home,
    slash,
    wait_screen,
)

pytestmark = [pytest.mark.npm, pytest.mark.slow]


@pytest.fixture
def shared(npm_programs: Programs, tmp_path: Path) -> tuple[RealCli, Path, Path]:
    return shared_home(npm_programs, tmp_path)


def _only_new_session(data: Path, known: set[str]) -> str:
    found = {path.stem for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name}
    [new] = found - known
    return new


def test_sessions_the_real_cli_writes_are_read_as_it_rebuilds_them(shared: tuple[RealCli, Path, Path]) -> None:
    real, cwd, data = shared
    (cwd / "x.txt").write_text("base\n")
    real("-p", "first turn", "-n", "Real Named")
    session = _only_new_session(data, set())
    read = json.dumps({"file_path": str(cwd / "x.txt")})
    write = json.dumps({"file_path": str(cwd / "x.txt"), "content": "new\n"})
    real("-r", "Real Named", "-p", f"write it [[tool read_file {read}]] [[then tool write_file {write}]]",
         model="local/stub-model-2")
    assert (cwd / "x.txt").read_text() == "new\n"
    switched = json.loads(run_ok(["sessions", "show", session, "--json"], cwd, data).stdout)
    assert switched["model"] == "local/stub-model-2"  # the model it switched to for that turn
    ours = our_context(session, cwd, data)
    resumed = real("-r", session, "-p", "third turn")
    same_context(ours, sent_context(resumed))
    shown = json.loads(run_ok(["sessions", "show", "Real Named", "--json"], cwd, data).stdout)
    assert shown["id"] == session and shown["name"] == "Real Named" and shown["skipped_lines"] == []
    listed = json.loads(run_ok(["sessions", "list", "--all", "--json"], cwd, data).stdout)
    assert [row["id"] for row in listed] == [session]
    # a fork it makes: lineage in meta, the same context
    real("-r", session, "--fork-session", "-p", "forked turn")
    fork = _only_new_session(data, {session})
    forked = json.loads(run_ok(["sessions", "show", fork, "--json"], cwd, data).stdout)
    assert forked["parent_session_id"] == session
    ours = our_context(fork, cwd, data)
    same_context(ours, sent_context(real("-r", fork, "-p", "in the fork")))
    # its checkpoint (a raw sha256 blob) restored by our rewind
    records = json.loads(run_ok(["checkpoints", "list", session, "--json"], cwd, data).stdout)["checkpoints"]
    turn = next(record for record in records if str(record["prompt"]).startswith("write it"))
    assert turn["files"][0]["hash"] == hashlib.sha256(b"base\n").hexdigest() and turn["files"][0]["algo"] == "sha256"
    done = run_cli(["rewind", session, "--to", str(turn["number"]), "--mode", "code", "--yes"], cwd, data)
    assert done.returncode == 0, done.stderr
    assert (cwd / "x.txt").read_text() == "base\n"


def test_sessions_we_write_are_resumed_by_the_real_cli(shared: tuple[RealCli, Path, Path]) -> None:
    real, cwd, data = shared
    (cwd / "a.txt").write_text("one\n")
    run_ok(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}', "-n", "Ours"], cwd, data)
    run_ok(["-c", "-p", "our second turn"], cwd, data)
    session = _only_new_session(data, set())
    ours = our_context(session, cwd, data)
    resumed = real("-r", "Ours", "-p", "the real cli continues")  # resolves our name
    same_context(ours, sent_context(resumed))
    # it continued the same branch: its reply hangs under our last entry
    tree = json.loads(run_ok(["sessions", "tree", session, "--json"], cwd, data).stdout)
    on_path = [row for row in tree["entries"] if row["on_active_path"]]
    assert len(on_path) == len(tree["entries"]) and tree["leaf"] == tree["entries"][-1]["id"]
    texts = [block.get("text") for message in json.loads(run_ok(["sessions", "context", session, "--json"], cwd,
                                                                data).stdout)["messages"]
             for block in message["content"]]
    assert "the real cli continues" in texts and "ok: the real cli continues" in texts
    # a rewound leaf: the real CLI resumes at it
    run_ok(["rewind", session, "--to", "2", "--mode", "conversation", "--yes"], cwd, data)
    ours = our_context(session, cwd, data)
    assert all("our second turn" not in text for _, text in ours)
    same_context(ours, sent_context(real("-r", session, "-p", "after the rewind")))


def test_our_compatible_backup_is_a_blob_the_real_cli_can_restore_from(shared: tuple[RealCli, Path, Path]) -> None:
    """What the real CLI's `/rewind` looks for (format ref §4.2): `file-history/<sid>/<hash>`
    holding the bytes whose sha256 is the item's `hash`, for every item it would restore."""
    real, cwd, data = shared
    (cwd / "a.txt").write_text("one\n")
    run_ok(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}'], cwd, data)
    session = _only_new_session(data, set())
    [transcript] = [path for path in (data / "projects").glob(f"*/{session}.jsonl")]
    record = json.loads(transcript.with_name(f"{session}.checkpoints.jsonl").read_text().split("\n")[0])
    [item] = record["files"]
    blob = data / "file-history" / session / item["hash"]
    assert "algo" not in item and hashlib.sha256(blob.read_bytes()).hexdigest() == item["hash"]
    # the real CLI reads our checkpoints and resumes the session with them in place
    real("-r", session, "-p", "still fine")
    after = json.loads(transcript.with_name(f"{session}.checkpoints.jsonl").read_text().split("\n")[0])
    assert after["files"][0]["hash"] == item["hash"] and blob.exists()


@pytest.mark.terminal
@pytest.mark.parametrize("compatible", [True, False])
def test_the_real_clis_rewind_restores_a_session_we_wrote(shared: tuple[RealCli, Path, Path], tmp_path: Path,
                                                          compatible: bool) -> None:
    """The real CLI's `/rewind` (its TUI, in tmux) on our session: with compatible backups it
    restores the file; with them off it refuses and changes nothing (why the setting exists)."""
    real, cwd, data = shared
    if not compatible:
        (data / "settings.json").write_text('{"checkpoints": {"compatibleBackups": false}}')
    (cwd / "a.txt").write_text("one\n")
    run_ok(["-p", 'call write_file {"file_path": "a.txt", "content": "two\\n"}'], cwd, data)
    run_ok(["-c", "-p", "hello"], cwd, data)
    session = _only_new_session(data, set())
    with real_tui(real, cwd, session, tmp_path) as name:
        wait_screen(name, "You said: hello")  # our session, resumed and drawn
        slash(name, "/rewind")
        wait_screen(name, "Select a checkpoint")
        keys(name, "Up")
        wait_screen(name, "> call write_file")
        keys(name, "Enter")
        wait_screen(name, "Code only")
        keys(name, "Down", "Down")
        wait_screen(name, "> Code only")
        keys(name, "Enter")
        if compatible:
            wait_screen(name, "1 file restored")
            assert (cwd / "a.txt").read_text() == "one\n"
        else:
            wait_screen(name, "Restore verification failed")  # the report, reproduced
            assert (cwd / "a.txt").read_text() == "two\n"


@pytest.mark.terminal
def test_its_own_rewind_and_clone_are_read_as_it_rebuilds_them(shared: tuple[RealCli, Path, Path],
                                                               tmp_path: Path) -> None:
    real, cwd, data = shared
    real("-p", "turn one")
    session = _only_new_session(data, set())
    real("-r", session, "-p", "turn two")
    real("-r", session, "-p", "turn three")
    with real_tui(real, cwd, session, tmp_path) as name:
        slash(name, "/rewind")
        wait_screen(name, "Select a checkpoint")
        keys(name, "Up")
        wait_screen(name, "> turn two")
        keys(name, "Enter")
        wait_screen(name, "> Conversation only")
        keys(name, "Enter")
        wait_screen(name, "messages removed")
        keys(name, "a branch turn ", "Enter")
        wait_screen(name, "ok: a branch turn")
        slash(name, "/clone")
        deadline = time.monotonic() + 60  # only to detect a hang
        while len(list((data / "projects").glob("*/*.jsonl"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
    clone = _only_new_session(data, {session})
    tree = json.loads(run_ok(["sessions", "tree", session, "--json"], cwd, data).stdout)
    off_path = [row for row in tree["entries"] if not row["on_active_path"]]
    assert len(off_path) == 4  # turns two and three, left on their branch
    ours = our_context(session, cwd, data)
    assert [text for _, text in ours][0] == "turn one" and "a branch turn" in ours[2][1]
    same_context(ours, sent_context(real("-r", session, "-p", "after its rewind")))
    cloned = json.loads(run_ok(["sessions", "show", clone, "--json"], cwd, data).stdout)
    [transcript] = list((data / "projects").glob(f"*/{session}.jsonl"))
    assert json.loads(Path(cloned["path"]).read_text().split("\n")[0])["parentSession"] == str(transcript)
    ours = our_context(clone, cwd, data)
    assert "turn two" not in [text for _, text in ours]
    same_context(ours, sent_context(real("-r", clone, "-p", "in the clone")))


@pytest.mark.terminal
def test_its_picker_lists_the_sessions_we_write(shared: tuple[RealCli, Path, Path], tmp_path: Path) -> None:
    real, cwd, data = shared
    run_ok(["-p", "hello from commandcode", "-n", "Written By Us"], cwd, data)
    session = _only_new_session(data, set())
    # an interactive session of ours (the picker leaves headless ones out, as ours does)
    [meta] = list((data / "projects").glob(f"*/{session}.meta.json"))
    values = json.loads(meta.read_text())
    values.pop("entrypoint", None)
    meta.write_text(json.dumps(values, indent=2))
    with real_tui(real, cwd, None, tmp_path, ready="Written By Us") as name:
        screen = screen_text(name)
        assert "Written By Us" in screen
        keys(name, "Enter")
        wait_screen(name, "You said: hello from commandcode")  # picked and resumed


@pytest.mark.terminal
def test_its_compaction_is_read_as_it_rebuilds_it(shared: tuple[RealCli, Path, Path], tmp_path: Path) -> None:
    """`/compact` in its TUI summarizes what lies before its newest ~30,000 tokens when that is at
    least five messages: five ~29k-token turns and two small ones make it do so."""
    real, cwd, data = shared
    big = "big turn " + "lorem ipsum dolor " * 6500  # under the 128 KiB limit of one argument
    real("-p", big)
    session = _only_new_session(data, set())
    for _ in range(4):
        real("-r", session, "-p", big)
    real("-r", session, "-p", "small a")
    real("-r", session, "-p", "small b")
    [transcript] = list((data / "projects").glob(f"*/{session}.jsonl"))
    with real_tui(real, cwd, session, tmp_path) as name:
        slash(name, "/compact")
        deadline = time.monotonic() + 90  # only to detect a hang
        while b'"type":"compaction"' not in transcript.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.3)
    compaction = [json.loads(line) for line in transcript.read_text().splitlines() if '"type":"compaction"' in line]
    assert len(compaction) == 1 and compaction[0]["summary"].startswith("Summary:")
    ours = our_context(session, cwd, data)
    assert ours[0][0] == "user" and "Summary:" in ours[0][1] and len(ours) < 14
    same_context(ours, sent_context(real("-r", session, "-p", "after the compaction")))


def test_items_of_links_fifos_and_folders_survive_the_real_cli(shared: tuple[RealCli, Path, Path]) -> None:
    """A turn whose `bash` call made a symlink, a FIFO and a folder and turned a file into a link:
    the real CLI resumes the session with those checkpoint items in place (skipped for it), and
    after it rewrote the file our rewind still puts the tree back."""
    real, cwd, data = shared
    (cwd / "a.txt").write_text("one\n")
    command = "ln -s a.txt link && mkfifo pipe && mkdir -p empty/inner && rm a.txt && ln -s /etc/hostname a.txt"
    run_ok(["-p", "call bash " + json.dumps({"command": command}), "--yolo"], cwd, data)
    session = _only_new_session(data, set())
    [transcript] = [path for path in (data / "projects").glob(f"*/{session}.jsonl")]
    records = transcript.with_name(f"{session}.checkpoints.jsonl")
    before = json.loads(records.read_text().split("\n")[0])["files"]
    assert {item["skipped"] for item in before} == {"symlink", "not_regular"}
    real("-r", session, "-p", "still fine")
    after = json.loads(records.read_text().split("\n")[0])["files"]
    assert after == before
    run_ok(["rewind", session, "--to", "1", "--mode", "code", "--yes"], cwd, data)
    assert sorted(path.name for path in cwd.iterdir()) == ["a.txt"]
    assert not (cwd / "a.txt").is_symlink() and (cwd / "a.txt").read_text() == "one\n"


def test_a_fork_carrying_an_unreadable_line_is_resumed_by_the_real_cli(shared: tuple[RealCli, Path, Path]) -> None:
    """A fork copies its source's body verbatim (it never scans it), so an unreadable line comes
    along: the real CLI skips it in the fork as it does in the source, and rebuilds our context."""
    real, cwd, data = shared
    run_ok(["-p", "first turn", "-n", "Corrupted"], cwd, data)
    session = _only_new_session(data, set())
    [transcript] = (data / "projects").glob(f"*/{session}.jsonl")
    with open(transcript, "ab") as handle:
        handle.write(b'{"broken\n')
    run_ok(["-r", session, "-p", "after the unreadable line"], cwd, data)
    forked = json.loads(run_ok(["sessions", "fork", session, "--json"], cwd, data).stdout)
    assert b'{"broken\n' in Path(forked["path"]).read_bytes()
    ours = our_context(forked["id"], cwd, data)
    assert any("after the unreadable line" in text for _, text in ours)
    same_context(ours, sent_context(real("-r", forked["id"], "-p", "the real cli in the fork")))
