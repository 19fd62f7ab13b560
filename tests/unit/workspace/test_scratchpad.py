"""The session scratchpad: the real CLI's path rules, 0700 folders, fail-open safety on a shared
/tmp (planted symlinks, another user's folder, a file as the base), the settings switch, the
bounded manifest, fork copies, deletion and the 30-day sweep, and `$COMMANDCODE_SCRATCHPAD` in
a real `-p` turn's shell tool."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import time
from pathlib import Path

import pytest

from commandcode.config.context import ProjectContext
from commandcode.workspace import scratchpad as pad
from commandcode.workspace.session_space import prepare
from helpers.cli import run_cli

SID = "0f5b9b8c-971d-40dd-aa7f-ce84152d19c2"
NOBODY = 65534


def test_the_cwd_is_sanitized_as_the_real_cli_does() -> None:
    assert pad.sanitize_cwd("/tmp/x") == "-tmp-x"
    assert pad.sanitize_cwd("/home/dév/a b.c") == "-home-d-v-a-b-c"
    long = "/" + "a" * 300
    digest = base64.urlsafe_b64encode(hashlib.sha256(long.encode()).digest()).decode()[:8]
    assert pad.sanitize_cwd(long) == ("-" + "a" * 199) + "-" + digest
    assert len(pad.sanitize_cwd(long)) == 209
    assert pad.sanitize_cwd("") == "root-" + base64.urlsafe_b64encode(hashlib.sha256(b"").digest()).decode()[:8]


def test_the_default_base_is_the_literal_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMMANDCODE_SCRATCHPAD_BASE", raising=False)
    monkeypatch.setenv("TMPDIR", "/var/tmp")
    assert pad.base_dir() == f"/tmp/commandcode-{os.getuid()}"
    monkeypatch.setenv("COMMANDCODE_SCRATCHPAD_BASE", "relative/base")  # ignored, as the real CLI ignores it
    assert pad.base_dir() == f"/tmp/commandcode-{os.getuid()}"


def test_path_and_modes(scratch_base: Path) -> None:
    made = pad.provision(SID, "/work/proj")
    assert made is not None
    expected = scratch_base / f"commandcode-{os.getuid()}" / "-work-proj" / SID / "scratchpad"
    assert made.path == str(expected)
    for folder in (expected, expected.parent, expected.parent.parent, expected.parent.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert made.env() == {"COMMANDCODE_SCRATCHPAD": str(expected)}
    assert str(expected) in made.prompt()


def test_ids_and_cwds_the_real_cli_refuses_get_none(scratch_base: Path) -> None:
    assert pad.provision("../evil", "/work/proj") is None
    assert pad.provision(".hidden", "/work/proj") is None
    assert pad.provision(SID, "relative/proj") is None
    assert not any(scratch_base.rglob("*evil*"))


def test_disabled_in_settings_is_silent(scratch_base: Path, home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"disableScratchpad": True}))
    notices: list[str] = []
    space = prepare(SID, ProjectContext(tmp_path), notices.append)
    assert space.scratchpad is None and space.env == {} and notices == []
    assert not (scratch_base / f"commandcode-{os.getuid()}").exists()


def test_malformed_settings_are_one_notice_and_no_scratchpad(scratch_base: Path, home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "settings.json").write_text('{"disableScratchpad": tru')
    notices: list[str] = []
    space = prepare(SID, ProjectContext(tmp_path), notices.append)
    assert space.scratchpad is None
    assert len(notices) == 1 and "settings.json:1:" in notices[0] and "scratchpad is off" in notices[0]
    assert (home / "settings.json").read_text() == '{"disableScratchpad": tru'


def _plant(scratch_base: Path) -> Path:
    base = scratch_base / f"commandcode-{os.getuid()}"
    base.mkdir(mode=0o700)
    return base


def test_a_planted_symlink_turns_it_off_with_one_notice(scratch_base: Path, tmp_path: Path) -> None:
    base = _plant(scratch_base)
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    (base / "-work-proj").symlink_to(elsewhere)
    notices: list[str] = []
    assert pad.provision(SID, "/work/proj", notify=notices.append) is None
    assert len(notices) == 1 and "symlink" in notices[0]
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_base_turns_it_off(scratch_base: Path, tmp_path: Path) -> None:
    target = tmp_path / "other"
    target.mkdir()
    (scratch_base / f"commandcode-{os.getuid()}").symlink_to(target)
    notices: list[str] = []
    assert pad.provision(SID, "/work/proj", notify=notices.append) is None
    assert notices and "symlink" in notices[0]
    assert list(target.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")
def test_a_folder_of_another_user_turns_it_off(scratch_base: Path) -> None:
    base = _plant(scratch_base)
    theirs = base / "-work-proj"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    notices: list[str] = []
    assert pad.provision(SID, "/work/proj", notify=notices.append) is None
    assert notices and "another user" in notices[0]
    assert list(theirs.iterdir()) == []


def test_a_base_that_is_a_file_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "base-file"
    base.write_text("not a folder")
    monkeypatch.setenv("COMMANDCODE_SCRATCHPAD_BASE", str(base))
    notices: list[str] = []
    assert pad.provision(SID, "/work/proj", notify=notices.append) is None
    assert len(notices) == 1
    assert base.read_text() == "not a folder"


def test_is_in_scratchpad_resolves_symlinks(scratch_base: Path, tmp_path: Path) -> None:
    made = pad.provision(SID, "/work/proj")
    assert made is not None
    inside = Path(made.path) / "notes" / "a.md"
    assert made.contains(inside) and pad.is_in_scratchpad(made.path, made.path)
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    (Path(made.path) / "link").symlink_to(outside)
    assert not made.contains(Path(made.path) / "link")
    assert not made.contains(Path(made.path + "-sibling") / "x")
    assert not pad.is_in_scratchpad(inside, None)


def test_the_manifest_is_bounded(scratch_base: Path) -> None:
    made = pad.provision(SID, "/work/proj")
    assert made is not None
    root = Path(made.path)
    assert pad.scratchpad_manifest(made.path) is None  # empty: nothing to say
    for number in range(120):
        (root / f"file{number:03}.txt").write_text("x" * number)
    manifest = pad.scratchpad_manifest(made.path)
    assert manifest is not None
    lines = manifest.splitlines()
    assert len(lines) == 1 + 50 + 1 and lines[-1] == "- … and 70 more not listed"
    assert "- file000.txt (0 bytes, modified " in manifest and "file049.txt" in manifest and "file050" not in manifest
    assert len(manifest.encode()) <= 8000
    tight = pad.scratchpad_manifest(made.path, max_bytes=600)
    assert tight is not None and len(tight.encode()) <= 600 and tight.endswith("more not listed")


def test_the_manifest_stops_at_depth_8(scratch_base: Path) -> None:
    made = pad.provision(SID, "/work/proj")
    assert made is not None
    deep = Path(made.path)
    for level in range(1, 11):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    manifest = pad.scratchpad_manifest(made.path)
    assert manifest is not None
    assert "d1/d2/d3/d4/d5/d6/d7/d8/ (folder" in manifest
    assert "d9" not in manifest and "bottom.txt" not in manifest


def test_a_fork_copies_the_scratchpad(scratch_base: Path, tmp_path: Path) -> None:
    source = pad.provision(SID, "/work/proj")
    assert source is not None
    (Path(source.path) / "sub").mkdir()
    (Path(source.path) / "sub" / "data.csv").write_bytes(b"a,b\n")
    (Path(source.path) / "link").symlink_to(tmp_path)
    fork = "11111111-2222-4333-8444-555555555555"
    assert pad.copy_scratchpad(SID, fork, "/work/proj")
    copied = Path(pad.scratchpad_path(fork, "/work/proj") or "")
    assert (copied / "sub" / "data.csv").read_bytes() == b"a,b\n"
    assert (copied / "link").is_symlink()
    assert stat.S_IMODE(copied.stat().st_mode) == 0o700
    assert not pad.copy_scratchpad("22222222-0000-4000-8000-000000000000", fork, "/work/proj")  # none to copy


def test_delete_and_the_30_day_sweep(scratch_base: Path) -> None:
    old, fresh, kept = SID, "aaaaaaaa-0000-4000-8000-000000000000", "bbbbbbbb-0000-4000-8000-000000000000"
    for session_id in (old, fresh, kept):
        made = pad.provision(session_id, "/work/proj")
        assert made is not None
        (Path(made.path) / "f.bin").write_bytes(b"x" * 100)
    long_ago = time.time() - 31 * 86400
    for session_id in (old, kept):
        folder = Path(pad.scratchpad_path(session_id, "/work/proj") or "").parent
        for path in [folder, *folder.rglob("*")]:
            os.utime(path, (long_ago, long_ago), follow_symlinks=False)
    assert pad.sweep_scratchpads(keep=frozenset({kept}), dry_run=True) == (1, 100)
    assert Path(pad.scratchpad_path(old, "/work/proj") or "").exists()
    assert pad.sweep_scratchpads(keep=frozenset({kept})) == (1, 100)
    assert not Path(pad.scratchpad_path(old, "/work/proj") or "").parent.exists()
    assert Path(pad.scratchpad_path(kept, "/work/proj") or "").exists()
    assert pad.delete_scratchpad(fresh, "/work/proj") == 100
    assert not Path(pad.scratchpad_path(fresh, "/work/proj") or "").parent.exists()


def test_the_shell_tool_gets_the_scratchpad(home: Path, workdir: Path, scratch_base: Path) -> None:
    command = json.dumps({"command": 'echo "pad=$COMMANDCODE_SCRATCHPAD"; touch "$COMMANDCODE_SCRATCHPAD/made"'})
    completed = run_cli(["-p", f"call bash {command}", "--yolo"], workdir, home, COMMANDCODE_SCRATCHPAD_BASE=str(scratch_base))
    assert completed.returncode == 0, completed.stderr
    line = next(line for line in completed.stdout.splitlines() if "pad=" in line)
    path = Path(line.split("pad=", 1)[1].strip())
    assert path.parent.parent.parent == scratch_base / f"commandcode-{os.getuid()}"
    assert path.name == "scratchpad" and (path / "made").is_file()


def test_the_agent_session_hooks(home: Path, workdir: Path, scratch_base: Path) -> None:
    from commandcode.agent.runtime import AgentSession

    with AgentSession.start(workdir) as agent:
        pad_path = agent.turns.tool_space().scratchpad
        assert pad_path is not None and agent.turns.scratchpad_manifest() is None
        (Path(pad_path.path) / "plan.md").write_text("steps\n")
        manifest = agent.turns.scratchpad_manifest()
        assert manifest is not None and "- plan.md (6 bytes, modified " in manifest
        agent.turns.run_turn("hello")
        assert agent.disk_line().startswith("disk: ") and "transcript" in agent.disk_line()


def test_a_session_start_sweeps_its_projects_stale_scratchpads(scratch_base: Path, home: Path, tmp_path: Path) -> None:
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    stale_here, stale_there = "cccccccc-0000-4000-8000-000000000000", "dddddddd-0000-4000-8000-000000000000"
    long_ago = time.time() - 31 * 86400
    for session_id, cwd in ((stale_here, here), (stale_there, there)):
        made = pad.provision(session_id, cwd)
        assert made is not None
        folder = Path(made.path).parent
        for path in (folder, Path(made.path)):
            os.utime(path, (long_ago, long_ago))
    prepare(SID, ProjectContext(here), lambda message: None)
    assert not Path(pad.scratchpad_path(stale_here, here) or "").exists()
    assert Path(pad.scratchpad_path(stale_there, there) or "").exists()  # another project's: left to `sweep`
    assert Path(pad.scratchpad_path(SID, here) or "").is_dir()
