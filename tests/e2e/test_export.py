"""`commandcode export`: the real CLI's md layout and html content for its own sample session,
every block type, the three selections, jsonl copies, defaults and names, and bad input — run as
real `python -m commandcode` processes on real files."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from helpers.checkpoints import read_only_tmpfs, small_tmpfs
from helpers.cli import copy_samples, needs_samples, run_cli, run_ok, snapshot
from helpers.transcripts import AWS_KEY_ID, GITHUB_TOKEN, PLANTED_HTML, TranscriptBuilder, every_block_session

SAMPLE_ID = "1ccb4627-5286-46c5-84a9-ce35adae899d"
REFERENCE_EXPORTS = Path(os.environ.get("COMMANDCODE_REFERENCE_EXPORTS", "/work/shared/reference/samples/exports"))
EXPORTED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def sample_data(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "samples")


def _reference_md() -> str:
    path = REFERENCE_EXPORTS / f"command-code-session-{SAMPLE_ID[:8]}.md"
    if not path.is_file():
        pytest.skip(f"the real CLI's export is not at {path}")
    return path.read_text(encoding="utf-8")


@needs_samples
def test_md_is_the_real_clis_layout(sample_data: Path, tmp_path: Path) -> None:
    """Byte for byte the real CLI's md, but for the export time, the title (the sample was
    renamed after the real export) and the sanitized paths (ours sanitizes what leaves)."""
    run_ok(["export", SAMPLE_ID[:8], "--format", "md"], tmp_path, sample_data)
    ours = (tmp_path / "command-code-session-1ccb4627.md").read_text(encoding="utf-8")
    expected = _reference_md().replace(f"# {SAMPLE_ID}\n", "# Interactive Renamed\n").replace("/home/dev/proj/", "./")
    assert EXPORTED.sub("T", ours) == EXPORTED.sub("T", expected)


@needs_samples
def test_html_has_the_real_clis_content(sample_data: Path, tmp_path: Path) -> None:
    run_ok(["export", SAMPLE_ID, "-o", "page.html"], tmp_path, sample_data)
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    for row in ('<div class="row row-user"><span class="user-marker">&#10095;</span><div class="user-body">'
                '<div class="user-text">Say hello please</div></div></div>',
                '<div class="row row-assistant"><div class="assistant-prose"><p>Hello from stub. You said: Say hello '
                'please</p></div></div>',
                '<details class="row row-tool"><summary><span class="tool-badge">READ</span><span class="tool-input">'
                'existing.txt</span></summary><div class="tool-body"><pre class="tool-output">Read 1/1 file, 1 line\n'
                '1: base</pre></div></details>'):
        assert row in page
    assert '<dt>Session</dt><dd data-field="session">1ccb4627-5286-46c5-84a9-ce35adae899d</dd>' in page
    assert '<dt>Model</dt><dd data-field="model">local/stub-model</dd>' in page
    assert '<dt>Messages</dt><dd data-field="messages">12</dd>' in page
    assert ">Expand all</button>" in page and ">Collapse all</button>" in page
    assert "/home/dev" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page loads something from the network"


def test_every_block_type_in_md_and_html(home: Path, workdir: Path) -> None:
    every_block_session(workdir).write(home)
    run_ok(["export", "Every block", "-f", "md", "--full"], workdir, home)
    md = next(workdir.glob("*.md")).read_text(encoding="utf-8")
    assert "> ❯ First prompt: look at the image\n> _[image]_" in md
    assert "<summary><em>Thinking</em></summary>\n\n> *Let me think.*\n>\n> *Step two.*" in md
    assert "<summary>READ src/app.py</summary>" in md and "<summary>BASH cat .env</summary>" in md
    assert "<summary>WRITE out.txt</summary>\n\n_No result captured._" in md
    assert "hidden" not in md.replace("hidden meta", "") and "get_self_knowledge" not in md
    assert "````\n" in md or "`code ``` ticks`" in md
    assert GITHUB_TOKEN not in md and AWS_KEY_ID not in md and "[REDACTED:github-token]" in md
    assert "MAX_TOKENS=4096" in md and "<system-path>/os.py" in md
    assert "Compacted summary" in md and "**Goal**: everything so far" in md
    assert "We tried a branch." in md
    assert "Abandoned prompt" not in md, "--full is the active path only"
    run_ok(["export", "Every block", "-f", "html", "--full", "-o", "full.html"], workdir, home)
    page = (workdir / "full.html").read_text(encoding="utf-8")
    assert PLANTED_HTML not in page and "&lt;script&gt;window.__planted" in page
    run_ok(["export", "Every block", "-f", "html"], workdir, home)
    context = next(path for path in workdir.glob("command-code-session-*.html")).read_text(encoding="utf-8")
    assert "Fourth prompt after the compaction" in context
    assert "First prompt" not in context, "the default is the context: before the compaction only its summary"
    assert '<img class="inline-image" alt="image" src="data:image/png;base64,' in page
    assert 'class="highlight"' in page or '<span class="k">def</span>' in page


def test_branch_all_shows_every_branch_with_the_active_path_marked(home: Path, workdir: Path) -> None:
    every_block_session(workdir).write(home)
    run_ok(["export", "Every block", "--branch", "all", "-o", "tree.html"], workdir, home)
    page = (workdir / "tree.html").read_text(encoding="utf-8")
    assert page.count('<details class="branch"') == 1
    branch = page[page.index('<details class="branch"'):]
    assert branch.index("Abandoned prompt on a branch") < branch.index("</div></details>") < branch.index("Third prompt")
    assert "not on the active path" in branch


def test_jsonl_is_a_byte_copy_and_redacts_only_when_asked(home: Path, workdir: Path) -> None:
    path = every_block_session(workdir).write(home)
    run_ok(["export", str(path), "-o", "copy.jsonl"], workdir, home)
    assert (workdir / "copy.jsonl").read_bytes() == path.read_bytes()
    run_ok(["export", str(path), "-o", "clean.jsonl", "--redact"], workdir, home)
    cleaned = (workdir / "clean.jsonl").read_text(encoding="utf-8")
    assert GITHUB_TOKEN not in cleaned and AWS_KEY_ID not in cleaned
    assert all(json.loads(line) for line in cleaned.splitlines())
    original = path.read_text(encoding="utf-8").splitlines()
    assert sum(a != b for a, b in zip(original, cleaned.splitlines())) == 1, "only the line with secrets changes"


def test_defaults_names_and_the_setting(home: Path, workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("hi")
    builder.assistant("hello")
    builder.write(home)
    run_ok(["export", builder.session_id[:8]], workdir, home)
    assert (workdir / f"command-code-session-{builder.session_id[:8]}.html").is_file()
    (workdir / "out").mkdir()
    run_ok(["export", builder.session_id, "-o", "out"], workdir, home)
    assert (workdir / "out" / f"command-code-session-{builder.session_id[:8]}.html").is_file()
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text('{"defaultExportFormat": "md"}\n')
    run_ok(["export", builder.session_id], workdir, home)
    assert (workdir / f"command-code-session-{builder.session_id[:8]}.md").read_text().startswith("# ")


def _session(home: Path, workdir: Path) -> TranscriptBuilder:
    builder = TranscriptBuilder(workdir)
    builder.user("hi")
    builder.assistant("hello")
    builder.write(home)
    return builder


@pytest.mark.parametrize("args, code, says", [
    (["-o", "notes.txt"], 2, "is not an export format"),
    (["-o", "x.md", "--format", "html"], 2, "contradicts"),
    (["--format", "pdf"], 2, "unknown export format"),
    (["-o", "missing/x.md"], 1, "no such folder"),
    (["--branch", "some"], 2, "unknown --branch"),
])
def test_bad_targets_are_one_line_and_write_nothing(home: Path, workdir: Path, args: list[str], code: int, says: str) -> None:
    builder = _session(home, workdir)
    before = snapshot(workdir)
    completed = run_cli(["export", builder.session_id, *args], workdir, home)
    assert completed.returncode == code, completed
    assert completed.stderr.startswith("error: ") and says in completed.stderr and "Traceback" not in completed.stderr
    assert len(completed.stderr.splitlines()) <= 2
    assert snapshot(workdir) == before


def test_a_read_only_folder_is_one_line_and_keeps_the_old_file(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = _session(home, workdir)
    with read_only_tmpfs(tmp_path / "ro", {"x.html": b"old"}) as folder:
        completed = run_cli(["export", builder.session_id, "-o", str(folder / "x.html")], workdir, home)
        assert completed.returncode == 1, completed
        assert completed.stderr.splitlines() == [f"error: {folder / 'x.html'}: Read-only file system",
                                                 "hint: that file system is read-only: name a path on another one"]
        assert [path.name for path in folder.iterdir()] == ["x.html"] and (folder / "x.html").read_bytes() == b"old"


def test_a_full_disk_leaves_nothing_half_written(home: Path, workdir: Path, tmp_path: Path) -> None:
    builder = TranscriptBuilder(workdir)
    for turn in range(40):
        builder.user(f"prompt {turn}")
        builder.assistant("reply " + "x" * 20_000)
    builder.write(home)
    with small_tmpfs(tmp_path / "small", "256k") as folder:
        (folder / "out.md").write_bytes(b"old")
        completed = run_cli(["export", builder.session_id, "-o", str(folder / "out.md")], workdir, home)
        assert completed.returncode == 1 and completed.stderr.startswith("error: "), completed
        assert "No space left" in completed.stderr
        assert [path.name for path in folder.iterdir()] == ["out.md"] and (folder / "out.md").read_bytes() == b"old"


def test_an_unwritable_target_keeps_the_users_file(home: Path, workdir: Path) -> None:
    """A folder in the target's place (any user, root too): refused, nothing touched."""
    builder = _session(home, workdir)
    (workdir / "taken.html").mkdir()
    (workdir / "taken.html" / "keep").write_text("mine")
    completed = run_cli(["export", builder.session_id, "-o", "taken.html/"], workdir, home)
    assert completed.returncode == 0  # a folder gets the default name inside it
    fifo = workdir / "pipe.md"
    os.mkfifo(fifo)
    completed = run_cli(["export", builder.session_id, "-o", str(fifo)], workdir, home)
    assert completed.returncode == 1 and completed.stderr.startswith("error: "), completed
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (workdir / "taken.html" / "keep").read_text() == "mine"


def test_an_existing_file_is_replaced_whole(home: Path, workdir: Path) -> None:
    builder = _session(home, workdir)
    target = workdir / "out.md"
    target.write_text("old\n")
    target.chmod(0o640)
    run_ok(["export", builder.session_id, "-o", "out.md"], workdir, home)
    assert target.read_text().startswith("# ") and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [path.name for path in workdir.iterdir()] == ["out.md"]


def test_corrupt_lines_are_left_out_and_counted(home: Path, workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("before the damage")
    builder.assistant("fine")
    path = builder.write(home, extra='{"type":"message","id":"torn\n{not json}\n')
    before = path.read_bytes()
    completed = run_ok(["export", str(path), "-o", "x.md"], workdir, home)
    assert "2 corrupt line(s)" in completed.stderr
    assert "before the damage" in (workdir / "x.md").read_text()
    run_ok(["export", str(path), "-o", "x.jsonl"], workdir, home)
    copied = (workdir / "x.jsonl").read_bytes()
    assert b"torn" not in copied and b"not json" not in copied and before.startswith(copied)
    assert path.read_bytes() == before, "the transcript is never changed"


def test_the_transcript_itself_is_refused(home: Path, workdir: Path) -> None:
    builder = _session(home, workdir)
    path = builder.write(home)
    before = path.read_bytes()
    completed = run_cli(["export", str(path), "-o", str(path)], workdir, home)
    assert completed.returncode == 1 and "own transcript" in completed.stderr
    assert path.read_bytes() == before


def test_an_unknown_session_is_one_line(home: Path, workdir: Path) -> None:
    completed = run_cli(["export", "no-such-session"], workdir, home)
    assert completed.returncode == 1 and completed.stderr.startswith("error: ") and "Traceback" not in completed.stderr
