"""Settings layers (`commandcode.config.settings`): where the files are, precedence and merging,
every way a file can be malformed, typed accessors, and writes that keep what they do not touch.

Real files in a private data dir and project; real subprocesses where a hang or a failed write
must be seen from outside (a FIFO in place of the file, a file-size limit that fails the write).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from commandcode.config import settings as cs
from commandcode.errors import CommandcodeError, SettingsError

HANG_TIMEOUT = 120  # only detects a hang; a passing run takes a fraction of a second


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private `COMMANDCODE_HOME` (the user layer lives there) and a HOME outside the project."""
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("COMMANDCODE_HOME", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return folder


@pytest.fixture
def project(tmp_path: Path, data: Path) -> Path:
    """A git-less project folder with an empty `.commandcode/` (resolved, as getcwd reports it)."""
    folder = tmp_path / "proj"
    (folder / ".commandcode").mkdir(parents=True)
    return folder.resolve()


def write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(value if isinstance(value, bytes) else json.dumps(value).encode("utf-8"))


def user_file(data: Path) -> Path:
    return data / "settings.json"


def project_file(project: Path) -> Path:
    return project / ".commandcode" / "settings.json"


def local_file(project: Path) -> Path:
    return project / ".commandcode" / "settings.local.json"


def run_python(code: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter with the test's environment."""
    kwargs.setdefault("env", dict(os.environ))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          timeout=HANG_TIMEOUT, check=False, **kwargs)


# --------------------------------------------------------------------------------------------
# Where the files are


def test_user_layer_lives_in_commandcode_home_else_in_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "elsewhere"))
    assert cs.settings_path("user") == tmp_path / "elsewhere" / "settings.json"
    monkeypatch.delenv("COMMANDCODE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    assert cs.settings_path("user") == tmp_path / "me" / ".commandcode" / "settings.json"


def test_project_layers_live_at_the_repository_root(project: Path) -> None:
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert cs.settings_path("project", deep) == project / "src" / "pkg" / ".commandcode" / "settings.json"  # no git
    (project / ".git").mkdir()
    assert cs.settings_path("project", deep) == project_file(project)
    assert cs.settings_path("local", deep) == local_file(project)
    (project / ".git").rmdir()
    (project / ".git").write_text("gitdir: /somewhere/else\n")  # a linked worktree's `.git` is a file
    assert cs.settings_path("local", deep) == local_file(project)


def test_a_deleted_working_directory_is_one_error_line(tmp_path: Path, data: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    completed = run_python(f"""
        import os
        os.chdir({str(gone)!r})
        os.rmdir({str(gone)!r})
        from commandcode.present.console import handle_errors
        from commandcode.config.settings import load_settings
        handle_errors(load_settings)()
    """, tmp_path, env={**os.environ, "NO_COLOR": "1"})
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "error: cannot find the project's settings: the working directory is gone (No such file or directory)",
        "hint: cd into the project again",
    ]


def test_an_unknown_layer_is_refused(project: Path) -> None:
    with pytest.raises(SettingsError, match="unknown settings layer 'global'"):
        cs.update_setting("global", "a", 1, cwd=project)


def test_the_home_folder_as_project_reads_the_user_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "me"
    monkeypatch.delenv("COMMANDCODE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    write(home / ".commandcode" / "settings.json", {"permissions": {"allow": ["Read"]}})
    write(home / ".commandcode" / "settings.local.json", {"permissions": {"allow": ["Edit"]}})
    loaded = cs.load_settings(home)
    assert [layer.layer for layer in loaded.layers] == ["user", "local"]
    assert loaded.permissions_allow == ["Read", "Edit"]


# --------------------------------------------------------------------------------------------
# Precedence and merging


def test_later_layers_win_for_scalars(data: Path, project: Path) -> None:
    write(user_file(data), {"defaultExportFormat": "md", "cleanupPeriodDays": 7, "theme": "dark"})
    write(project_file(project), {"defaultExportFormat": "jsonl", "cleanupPeriodDays": 14})
    write(local_file(project), {"cleanupPeriodDays": 0})
    loaded = cs.load_settings(project)
    assert loaded.cleanup_period_days == 0  # local over project over user
    assert loaded.default_export_format == "jsonl"  # project over user
    assert loaded.get("theme") == "dark"  # set only by the user
    assert loaded.source("cleanupPeriodDays").layer == "local"
    assert loaded.source("theme").layer == "user"
    assert loaded.source("nothing") is None
    assert loaded.warnings == []


def test_objects_merge_deeply(data: Path, project: Path) -> None:
    write(user_file(data), {"checkpoints": {"trackShell": False, "extra": {"a": 1, "b": 1}}})
    write(project_file(project), {"checkpoints": {"maxStoreBytes": 1000, "extra": {"b": 2}}})
    write(local_file(project), {"checkpoints": {"extra": {"c": 3}}})
    loaded = cs.load_settings(project)
    assert loaded.get("checkpoints") == {"trackShell": False, "extra": {"a": 1, "b": 2, "c": 3}, "maxStoreBytes": 1000}
    assert loaded.checkpoints_track_shell is False
    assert loaded.checkpoints_max_store_bytes == 1000
    assert loaded.get("checkpoints.extra.b") == 2


def test_lists_concatenate_across_layers_without_repeats(data: Path, project: Path) -> None:
    write(user_file(data), {"permissions": {"allow": ["Read", "Bash(ls:*)"], "deny": ["Read(./.env)"]}})
    write(project_file(project), {"permissions": {"allow": ["Edit", "Read"], "ask": ["Bash(git push:*)"]}})
    write(local_file(project), {"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Bash(rm:*)"]}})
    loaded = cs.load_settings(project)
    assert loaded.permissions_allow == ["Read", "Bash(ls:*)", "Edit", "Bash(npm test:*)"]
    assert loaded.permissions_deny == ["Read(./.env)", "Bash(rm:*)"]
    assert loaded.permissions_ask == ["Bash(git push:*)"]
    assert loaded.get("permissions.allow") == loaded.permissions_allow  # raw and typed views agree


def test_list_repeats_are_judged_by_json_type_not_python_equality() -> None:
    merged = cs.merge_layers({"xs": [1, {"k": 1}, "1"]}, {"xs": [True, 1.0, {"k": 1}, 1, "1", 0, False]})
    assert merged == {"xs": [1, {"k": 1}, "1", True, 1.0, 0, False]}
    assert [type(item) for item in merged["xs"]] == [int, dict, str, bool, float, int, bool]


def test_a_later_scalar_replaces_an_earlier_object_and_back() -> None:
    assert cs.merge_layers({"a": {"b": 1}}, {"a": 2}) == {"a": 2}
    assert cs.merge_layers({"a": 2}, {"a": {"b": 1}}) == {"a": {"b": 1}}
    assert cs.merge_layers({"a": [1]}, {"a": None}) == {"a": None}


def test_get_returns_copies(data: Path, project: Path) -> None:
    write(user_file(data), {"permissions": {"allow": ["Read"]}})
    loaded = cs.load_settings(project)
    loaded.get("permissions")["allow"].append("Edit")
    loaded.permissions_allow.append("Bash")
    assert loaded.permissions_allow == ["Read"]
    assert loaded.layers[0].data == {"permissions": {"allow": ["Read"]}}


def test_missing_files_give_every_default(data: Path, project: Path) -> None:
    loaded = cs.load_settings(project)
    assert all(not layer.exists for layer in loaded.layers)
    defaults = {name: getattr(loaded, name) for name in ACCESSORS}
    assert defaults == {name: case[2] for name, case in ACCESSORS.items()}
    assert loaded.get("a.b", "fallback") == "fallback"
    assert loaded.warnings == []


# --------------------------------------------------------------------------------------------
# Typed accessors: each checks its type; a wrong one is a warning and the default

# accessor: (key path, a good value, the default, wrong values)
ACCESSORS: dict[str, tuple[str, Any, Any, list[Any]]] = {
    "permissions_default_mode": ("permissions.defaultMode", "acceptEdits", "default", [3, "", None, ["plan"]]),
    "default_export_format": ("defaultExportFormat", "md", "html", ["pdf", 1, True]),
    "cleanup_period_days": ("cleanupPeriodDays", 90, 30, [-1, 1.5, "30", True]),
    "disable_scratchpad": ("disableScratchpad", True, False, ["true", 1, None]),
    "branch_summary": ("branchSummary", False, True, ["no", 0]),
    "worktree_base_ref": ("worktree.baseRef", "head", "fresh", ["HEAD~1", 7]),
    "checkpoints_track_shell": ("checkpoints.trackShell", False, True, ["off", 0]),
    "checkpoints_track_shell_max_files": ("checkpoints.trackShellMaxFiles", 10, 50_000, [0, -5, 2.0, False, "10"]),
    "checkpoints_max_store_bytes": ("checkpoints.maxStoreBytes", 1 << 30, None, [0, "1GB", 1e9, True]),
    "checkpoints_compatible_backups": ("checkpoints.compatibleBackups", False, True, ["yes", 1]),
    "status_line": ("statusLine", {"type": "command", "command": "echo hi", "padding": 0}, None,
                    ["echo hi", {"type": "command"}, {"command": 1}, []]),
    "permissions_allow": ("permissions.allow", ["Read"], [], ["Read", {"Read": True}, 1]),
    "permissions_deny": ("permissions.deny", ["Bash(rm:*)"], [], ["Bash(rm:*)", None]),
    "permissions_ask": ("permissions.ask", ["Edit"], [], [True, "Edit"]),
}
WRONG_CASES = [(name, bad) for name, case in ACCESSORS.items() for bad in case[3]]


def nested(key_path: str, value: Any) -> dict[str, Any]:
    for part in reversed(key_path.split(".")):
        value = {part: value}
    return value


@pytest.mark.parametrize("name", sorted(ACCESSORS))
def test_a_good_value_is_returned(name: str, data: Path, project: Path) -> None:
    key, good, _default, _wrong = ACCESSORS[name]
    write(project_file(project), nested(key, good))
    loaded = cs.load_settings(project)
    assert getattr(loaded, name) == good
    assert loaded.warnings == []


@pytest.mark.parametrize(("name", "bad"), WRONG_CASES, ids=[f"{name}-{json.dumps(bad)}" for name, bad in WRONG_CASES])
def test_a_wrong_type_warns_with_file_and_key_and_uses_the_default(name: str, bad: Any, data: Path, project: Path) -> None:
    key, _good, default, _wrong = ACCESSORS[name]
    write(user_file(data), {"unrelated": True})
    write(local_file(project), nested(key, bad))
    loaded = cs.load_settings(project)
    assert getattr(loaded, name) == default
    assert len(loaded.warnings) == 1, loaded.warnings
    assert loaded.warnings[0].startswith(f"{local_file(project)}: {key}: expected "), loaded.warnings
    assert "using the default" in loaded.warnings[0]
    getattr(loaded, name)
    assert len(loaded.warnings) == 1  # asking again does not repeat it


def test_an_object_on_the_way_that_is_something_else_warns(data: Path, project: Path) -> None:
    write(project_file(project), {"permissions": ["Read"], "checkpoints": 5})
    loaded = cs.load_settings(project)
    assert loaded.permissions_allow == []
    assert loaded.checkpoints_track_shell is True
    assert loaded.warnings == [
        f"{project_file(project)}: permissions: expected an object, got a list; using the default ([])",
        f"{project_file(project)}: checkpoints: expected an object, got a number; using the default (true)",
    ]


def test_rule_lists_drop_only_the_bad_layer_or_item(data: Path, project: Path) -> None:
    write(user_file(data), {"permissions": {"deny": ["Bash(rm:*)", 7, "Read(./.env)"]}})
    write(project_file(project), {"permissions": {"deny": "Bash(curl:*)"}})
    write(local_file(project), {"permissions": {"deny": ["Bash(curl:*)"]}})
    loaded = cs.load_settings(project)
    assert loaded.permissions_deny == ["Bash(rm:*)", "Read(./.env)", "Bash(curl:*)"]
    assert loaded.warnings == [
        f"{user_file(data)}: permissions.deny[1]: expected a string, got a number; using the default ([])",
        f"{project_file(project)}: permissions.deny: expected a list of strings, got a string; using the default ([])",
    ]


def test_messages_write_the_home_folder_as_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cs.shown_path(tmp_path / ".commandcode" / "settings.json") == "~/.commandcode/settings.json"
    assert cs.shown_path(str(tmp_path) + "x/settings.json") == str(tmp_path) + "x/settings.json"


# --------------------------------------------------------------------------------------------
# Malformed files: one line with file, line and column; never overwritten

# name: (file bytes, the message after "<path>:")
MALFORMED: dict[str, tuple[bytes, str]] = {
    "missing comma": (b'{\n  "permissions": {\n    "allow": ["Read"]\n    "deny": []\n  }\n}\n',
                      "4:5: Expecting ',' delimiter"),
    "trailing comma": (b'{"a": 1,}', "1:9: Expecting property name enclosed in double quotes"),
    "truncated": (b'{\n  "a": ', "2:8: Expecting value"),
    "comment": (b'{\n  // mine\n  "a": 1\n}', "2:3: Expecting property name enclosed in double quotes"),
    "single quotes": (b"{'a': 1}", "1:2: Expecting property name enclosed in double quotes"),
    "two values": (b'{"a": 1}\n{"b": 2}\n', "2:1: Extra data"),
    "control character": (b'{"a": "x\ty"}', "1:9: Invalid control character at"),
    "top level list": (b'["Read"]', "1:1: the top level is a list, not an object"),
    "top level string": (b'\n  "x"\n', "2:3: the top level is a string, not an object"),
    "top level number": (b"3", "1:1: the top level is a number, not an object"),
    "top level null": (b"null", "1:1: the top level is null, not an object"),
    "top level boolean": (b"true", "1:1: the top level is a boolean, not an object"),
    "NaN": (b'{"a": NaN}', "1:7: NaN is not valid JSON"),
    "Infinity after a string naming it": (b'{"-Infinity": 1,\n "b": -Infinity}', "2:7: -Infinity is not valid JSON"),
    "number out of range": (b'{"a": [1, 1e400]}', "1:11: the number 1e400 is out of range"),
    "integer too long to convert": (b'{"a": 1, "b": -' + b"9" * 5000 + b"}",
                                    "1:15: the number -99999999999... has too many digits (5001)"),
    "not UTF-8": (b'{"a": "\xff"}', "1:8: not valid UTF-8 (byte 0xff)"),
    "not UTF-8 after multibyte text": ('{\n "é": "'.encode() + b'\xfe"}', "2:8: not valid UTF-8 (byte 0xfe)"),
    "UTF-16 with its BOM": ('{"a": 1}'.encode("utf-16"), "1:1: not valid UTF-8 (byte 0xff)"),
    "BOM then a syntax error": (b'\xef\xbb\xbf{"a" 1}', "1:6: Expecting ':' delimiter"),
    "nested too deeply": (b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "nested too deeply to read"),
}


def message_after_path(error: SettingsError, path: Path) -> str:
    text = str(error)
    assert text.startswith(f"{path}:"), text
    assert "\n" not in text
    return text[len(f"{path}:"):].lstrip()


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("layer", ["user", "project", "local"])
def test_a_malformed_file_is_reported_with_line_and_column(case: str, layer: str, data: Path, project: Path) -> None:
    content, expected = MALFORMED[case]
    path = {"user": user_file(data), "project": project_file(project), "local": local_file(project)}[layer]
    write(path, content)
    with pytest.raises(SettingsError) as caught:
        cs.load_settings(project)
    assert message_after_path(caught.value, path).startswith(expected)
    assert caught.value.hint and "by hand" in caught.value.hint


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_file_is_never_overwritten(case: str, data: Path, project: Path) -> None:
    content = MALFORMED[case][0]
    path = local_file(project)
    write(path, content)
    for change in (lambda: cs.update_setting("local", "permissions.defaultMode", "plan", cwd=project),
                   lambda: cs.add_to_list("local", "permissions.allow", "Bash(ls:*)", cwd=project)):
        with pytest.raises(SettingsError):
            change()
        assert path.read_bytes() == content
    assert sorted(os.listdir(path.parent)) == ["settings.local.json"]  # no temporary left behind


def test_the_cli_shape_of_a_malformed_file_is_one_error_line(tmp_path: Path, data: Path, project: Path) -> None:
    home = tmp_path / "home"
    (home / ".commandcode").mkdir(parents=True)
    write(home / ".commandcode" / "settings.json", b'{\n  "a": 1,\n  "b": 2\n    "c": 3\n}\n')
    completed = run_python("""
        from commandcode.present.console import handle_errors
        from commandcode.config.settings import load_settings
        handle_errors(load_settings)()
    """, project, env={**{k: v for k, v in os.environ.items() if k != "COMMANDCODE_HOME"}, "HOME": str(home), "NO_COLOR": "1"})
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "error: ~/.commandcode/settings.json:4:5: Expecting ',' delimiter",
        "hint: fix the file by hand; commandcode never overwrites a file it cannot read",
    ]


@pytest.mark.parametrize("content", [b"", b"  \n\t\n", b"\xef\xbb\xbf", b"{}"], ids=["empty", "blank", "only a BOM", "{}"])
def test_an_empty_file_is_an_empty_layer(content: bytes, data: Path, project: Path) -> None:
    write(local_file(project), content)
    write(user_file(data), {"cleanupPeriodDays": 3})
    loaded = cs.load_settings(project)
    assert loaded.layers[2].exists and loaded.layers[2].data == {}
    assert loaded.cleanup_period_days == 3


def test_a_bom_is_read_and_kept_on_write(data: Path, project: Path) -> None:
    write(project_file(project), b'\xef\xbb\xbf{\r\n  "cleanupPeriodDays": 5\r\n}\r\n')
    assert cs.load_settings(project).cleanup_period_days == 5
    cs.update_setting("project", "disableScratchpad", True, cwd=project)
    assert project_file(project).read_bytes() == b'\xef\xbb\xbf{\n  "cleanupPeriodDays": 5,\n  "disableScratchpad": true\n}\n'


# --------------------------------------------------------------------------------------------
# Something other than a regular file in its place: refused, never opened blocking

def plant(kind: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)  # no writer ever opens it: a blocking open would hang
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)  # bound by its short name: a deep temp path passes AF_UNIX's 108 bytes
        try:
            server.bind(path.name)  # left bound-but-closed: the socket file stays
        finally:
            os.chdir(here)
        server.close()
    elif kind == "link to a device":
        path.symlink_to("/dev/zero")  # endless bytes: a reader that does not check never finishes
    elif kind == "link to a fifo":
        os.mkfifo(path.with_name("elsewhere.fifo"))
        path.symlink_to(path.with_name("elsewhere.fifo"))


NOT_REGULAR = ["fifo", "folder", "socket", "link to a device", "link to a fifo"]


@pytest.mark.parametrize("kind", NOT_REGULAR)
@pytest.mark.parametrize("layer", ["user", "local"])
def test_a_non_regular_file_is_refused_without_hanging(kind: str, layer: str, data: Path, project: Path) -> None:
    path = user_file(data) if layer == "user" else local_file(project)
    plant(kind, path)
    before = os.lstat(path)
    completed = run_python(f"""
        import sys
        from commandcode.config.settings import add_to_list, load_settings, update_setting
        from commandcode.errors import SettingsError
        for attempt in (load_settings, lambda: update_setting({layer!r}, "a", 1),
                        lambda: add_to_list({layer!r}, "permissions.allow", "Read")):
            try:
                attempt()
            except SettingsError as error:
                print(error)
            else:
                sys.exit("not refused")
    """, project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [f"{path} is not a regular file; refusing to open it"] * 3
    after = os.lstat(path)
    assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino)


def test_a_folder_in_place_of_the_settings_folder_is_refused(data: Path, project: Path) -> None:
    (project / ".commandcode").rmdir()
    (project / ".commandcode").write_text("not a folder\n")
    with pytest.raises(SettingsError, match=r"^cannot write .*settings\.local\.json: .*the file was left as it was$"):
        cs.update_setting("local", "a", 1, cwd=project)
    assert (project / ".commandcode").read_text() == "not a folder\n"


# --------------------------------------------------------------------------------------------
# Writes: atomic, and everything not named stays as it was

ORIGINAL = """{
  "zeta": {"keep": [1, 2, 3], "nested": {"deep": null}},
  "permissions": {"allow": ["Read"], "x-custom": "mine"},
  "alpha": "é ✓",
  "big": 123456789012345678901234567890,
  "float": 1.5
}
"""


def test_an_update_keeps_other_keys_their_order_and_unknown_values(data: Path, project: Path) -> None:
    write(project_file(project), ORIGINAL.encode())
    cs.update_setting("project", "permissions.defaultMode", "plan", cwd=project)
    cs.update_setting("project", "zeta.nested.deep", False, cwd=project)
    cs.update_setting("project", "worktree.baseRef", "head", cwd=project)
    assert project_file(project).read_text(encoding="utf-8") == textwrap.dedent("""\
        {
          "zeta": {
            "keep": [
              1,
              2,
              3
            ],
            "nested": {
              "deep": false
            }
          },
          "permissions": {
            "allow": [
              "Read"
            ],
            "x-custom": "mine",
            "defaultMode": "plan"
          },
          "alpha": "é ✓",
          "big": 123456789012345678901234567890,
          "float": 1.5,
          "worktree": {
            "baseRef": "head"
          }
        }
    """)


def test_a_new_file_and_its_folder_are_created(data: Path, project: Path) -> None:
    (project / ".commandcode").rmdir()
    cs.update_setting("local", ("statusLine",), {"type": "command", "command": "date"}, cwd=project)
    assert local_file(project).read_text() == '{\n  "statusLine": {\n    "type": "command",\n    "command": "date"\n  }\n}\n'
    assert stat.S_IMODE(local_file(project).stat().st_mode) == 0o600
    cs.update_setting("user", "cleanupPeriodDays", 60)
    assert json.loads(user_file(data).read_text()) == {"cleanupPeriodDays": 60}
    assert cs.load_settings(project).status_line == {"type": "command", "command": "date"}


def test_a_write_keeps_the_file_mode(data: Path, project: Path) -> None:
    write(project_file(project), {"a": 1})
    project_file(project).chmod(0o640)
    cs.update_setting("project", "b", 2, cwd=project)
    assert stat.S_IMODE(project_file(project).stat().st_mode) == 0o640


def test_a_symlinked_file_is_written_through_the_link(tmp_path: Path, data: Path, project: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    write(dotfiles, {"a": 1})
    user_file(data).symlink_to(dotfiles)
    cs.add_to_list("user", "permissions.allow", "Read")
    assert user_file(data).is_symlink()
    assert json.loads(dotfiles.read_text()) == {"a": 1, "permissions": {"allow": ["Read"]}}


def test_add_to_list_appends_once(data: Path, project: Path) -> None:
    write(local_file(project), {"permissions": {"allow": ["Read"]}})
    assert cs.add_to_list("local", "permissions.allow", "Bash(npm test:*)", cwd=project) is True
    before = os.stat(local_file(project))
    assert cs.add_to_list("local", "permissions.allow", "Bash(npm test:*)", cwd=project) is False
    after = os.stat(local_file(project))
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    assert cs.add_to_list("local", "permissions.deny", "Bash(rm:*)", cwd=project) is True
    assert json.loads(local_file(project).read_text()) == {
        "permissions": {"allow": ["Read", "Bash(npm test:*)"], "deny": ["Bash(rm:*)"]}}


@pytest.mark.parametrize(("content", "call", "message"), [
    ({"permissions": "all"}, ("update", "permissions.defaultMode", "plan"), "permissions is a string, not an object"),
    ({"permissions": ["Read"]}, ("add", "permissions.allow", "Edit"), "permissions is a list, not an object"),
    ({"permissions": {"allow": "Read"}}, ("add", "permissions.allow", "Edit"), "permissions.allow is a string, not a list"),
    ({"permissions": {"allow": None}}, ("add", "permissions.allow", "Edit"), "permissions.allow is null, not a list"),
    ({"a": {"b": 1}}, ("update", "a.b.c", 2), "a.b is a number, not an object"),
], ids=["update through a string", "add through a list", "add to a string", "add to null", "update through a number"])
def test_a_key_in_the_way_is_refused_and_the_file_kept(content: dict[str, Any], call: tuple[str, str, Any], message: str,
                                                       data: Path, project: Path) -> None:
    write(local_file(project), content)
    before = local_file(project).read_bytes()
    function = cs.update_setting if call[0] == "update" else cs.add_to_list
    with pytest.raises(SettingsError, match=f"^{local_file(project)}: {message}; refusing to replace it$"):
        function("local", call[1], call[2], cwd=project)
    assert local_file(project).read_bytes() == before


@pytest.mark.parametrize("value", [float("nan"), float("-inf"), b"bytes", {"a", "set"}, object(), {"k": [float("inf")]}],
                         ids=["NaN", "-Infinity", "bytes", "set", "object", "nested Infinity"])
def test_a_value_that_is_not_json_is_refused_and_the_file_kept(value: Any, data: Path, project: Path) -> None:
    write(local_file(project), {"keep": "me", "permissions": {"allow": ["Read"]}})
    before = local_file(project).read_bytes()
    for change in (cs.update_setting, cs.add_to_list):
        with pytest.raises(SettingsError, match=f"^cannot write {local_file(project)}: the new value is not JSON"):
            change("local", "permissions.allow", value, cwd=project)
        assert local_file(project).read_bytes() == before
    assert sorted(os.listdir(local_file(project).parent)) == ["settings.local.json"]


@pytest.mark.parametrize("key", ["", "a..b", ".a", "a.", []],
                         ids=["empty", "empty middle", "leading dot", "trailing dot", "no parts"])
def test_a_bad_key_path_is_refused(key: Any, data: Path, project: Path) -> None:
    with pytest.raises(SettingsError, match="bad settings key"):
        cs.update_setting("local", key, 1, cwd=project)
    assert not local_file(project).exists()


def test_a_failed_write_leaves_the_old_file(data: Path, project: Path) -> None:
    """A real failure mid-write: a file-size limit below the new text (the write gets EFBIG)."""
    old = b'{\n  "keep": "me"\n}\n'
    write(local_file(project), old)
    limit = len(old) + 8
    completed = run_python(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        from commandcode.config.settings import update_setting
        from commandcode.errors import SettingsError
        try:
            update_setting("local", "statusLine", {{"type": "command", "command": "x" * 4096}})
        except SettingsError as error:
            print(error)
    """, project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"cannot write {local_file(project)}: File too large; the file was left as it was"
    assert local_file(project).read_bytes() == old
    assert sorted(os.listdir(local_file(project).parent)) == ["settings.local.json"]


def test_a_failed_rename_leaves_the_old_file(data: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = b'{"keep": "me"}'
    write(local_file(project), old)

    def refuse(source: Any, target: Any) -> None:
        raise OSError(5, "Input/output error", str(target))

    monkeypatch.setattr("commandcode.storage.durable.os.replace", refuse)
    with pytest.raises(SettingsError, match="Input/output error; the file was left as it was"):
        cs.add_to_list("local", "permissions.allow", "Read", cwd=project)
    assert local_file(project).read_bytes() == old
    assert sorted(os.listdir(local_file(project).parent)) == ["settings.local.json"]


def test_concurrent_writers_lose_no_rule(data: Path, project: Path) -> None:
    script = """
        import sys
        from commandcode.config.settings import add_to_list
        for number in range(25):
            add_to_list("local", "permissions.allow", f"Bash(tool-{sys.argv[1]}-{number})")
    """
    writers = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), name], cwd=project, env=dict(os.environ))
               for name in ("a", "b", "c")]
    assert [writer.wait(timeout=HANG_TIMEOUT) for writer in writers] == [0, 0, 0]
    rules = json.loads(local_file(project).read_text())["permissions"]["allow"]
    assert sorted(rules) == sorted(f"Bash(tool-{name}-{number})" for name in "abc" for number in range(25))


# --------------------------------------------------------------------------------------------
# Start-up cost and the error hierarchy


def test_import_commandcode_does_not_load_settings(project: Path) -> None:
    completed = run_python("""
        import sys
        import commandcode, commandcode.config
        print(sorted(name for name in sys.modules
                     if name in ("json", "typing", "pathlib", "dataclasses", "commandcode.config.settings")))
    """, project)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_settings_errors_are_commandcode_errors() -> None:
    assert issubclass(SettingsError, CommandcodeError)


def test_a_repeated_key_counts_last_with_a_warning_and_is_never_rewritten(data: Path, project: Path) -> None:
    content = b'{"permissions": {"allow": ["Read"]}, "x": 1, "permissions": {"deny": ["Bash(rm:*)"]}}'
    write(local_file(project), content)
    loaded = cs.load_settings(project)
    assert loaded.permissions_allow == [] and loaded.permissions_deny == ["Bash(rm:*)"]  # JSON.parse: the last wins
    assert list(loaded.layers[2].data) == ["permissions", "x"]
    assert loaded.warnings == [f'{local_file(project)}: the key "permissions" appears more than once in an object; '
                               "the last one counts"]
    for change in (lambda: cs.update_setting("local", "x", 2, cwd=project),
                   lambda: cs.add_to_list("local", "permissions.allow", "Edit", cwd=project)):
        with pytest.raises(SettingsError, match='"permissions" appears more than once.*refusing to rewrite the file'):
            change()
        assert local_file(project).read_bytes() == content


def test_a_new_local_settings_file_is_kept_out_of_git_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The personal settings.local.json ("don't ask again" rules) goes into .git/info/exclude when
    it is created, in the main checkout and from a linked worktree alike: `git status` stays clean."""
    import subprocess

    from commandcode.config.settings import add_to_list

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], cwd=repo, check=True)
    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "data"))
    add_to_list("local", ("permissions", "allow"), "Bash(npm test:*)", cwd=repo)
    assert (repo / ".commandcode" / "settings.local.json").is_file()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""
    add_to_list("local", ("permissions", "allow"), "Bash(ls:*)", cwd=repo)
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.commandcode/settings.local.json") == 1
    other = tmp_path / "other"
    subprocess.run([*git, "worktree", "add", "-q", "-b", "side", str(other)], cwd=repo, check=True)
    from commandcode.config.settings_files import git_exclude_file

    found = git_exclude_file(other)
    assert found is not None and found.resolve() == (repo / ".git" / "info" / "exclude").resolve()
