"""Permission rules and modes (agent/permissions.py): Claude Code's rule syntax from real settings
files, deny > ask > allow, the four modes, headless refusals, the interactive answers (once,
session, don't ask again into settings.local.json) and compound commands judged part by part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode.agent.permissions import Grants, PermissionAnswer, PermissionRequest, Policy, Rule
from commandcode.agent.runtime import AgentSession
from commandcode.errors import SettingsError, UsageError
from commandcode.workspace.shell_commands import invocations


def _settings(here: Path, permissions: dict[str, Any], name: str = "settings.json") -> None:
    (here / ".commandcode").mkdir(exist_ok=True)
    (here / ".commandcode" / name).write_text(json.dumps({"permissions": permissions}))


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command}


def _programs(command: str) -> list[str]:
    return [call.rule() for call in invocations(command)]


def test_a_command_line_is_cut_into_the_programs_it_runs() -> None:
    assert _programs("a && b; c | d") == ["Bash(a)", "Bash(b)", "Bash(c)", "Bash(d)"]
    assert _programs("npm test || echo 'x && y' ; ls\ncat f") == ["Bash(npm test)", "Bash(echo 'x && y')", "Bash(ls)",
                                                                  "Bash(cat f)"]
    assert _programs('echo "a;b" 2>&1 | tee log &') == ["Bash(echo 'a;b' 2>&1)", "Bash(tee log)"]
    assert _programs("echo $(a && b) && c") == ["Bash(a)", "Bash(b)", "Bash(echo:*)", "Bash(c)"]


def test_rule_syntax() -> None:
    rule = Rule.parse("Bash(npm test:*)")
    assert rule is not None and rule.kind == "bash"
    assert rule.matches_command("npm test") and rule.matches_command("npm test --watch")
    assert not rule.matches_command("npm testing") and not rule.matches_command("npm run")
    glob = Rule.parse("Bash(git * --dry-run)")
    assert glob is not None and glob.matches_command("git clean -fd --dry-run") and not glob.matches_command("git clean")
    assert Rule.parse("Edit") is not None and Rule.parse("Edit").specifier is None  # type: ignore[union-attr]
    assert Rule.parse("WebFetch(domain:x)") is None and Rule.parse("mcp__github__create_issue") is None
    for malformed in ("not a rule(", "Bash(rm:*", "Bsh(rm:*)", "Bash(rm && ls)", "Bash(echo 'open)"):
        with pytest.raises(ValueError):
            Rule.parse(malformed)
    read = Rule.parse("Read(./secrets/**)")
    assert read is not None and read.matches_path("/p/secrets/a/b.txt", "/p", "/p")
    assert not read.matches_path("/p/other.txt", "/p", "/p")
    absolute = Rule.parse("Read(//etc/hosts)")
    assert absolute is not None and absolute.matches_path("/etc/hosts", "/p", "/p")
    rooted = Rule.parse("Edit(/src/*.py)")
    assert rooted is not None and rooted.matches_path("/root/src/a.py", "/root/sub", "/root")
    assert not rooted.matches_path("/root/src/deep/a.py", "/root/sub", "/root")


def test_a_command_whose_program_is_unknown_gets_a_hint_that_works(here: Path) -> None:
    _settings(here, {"allow": ["Bash(ls:*)", "Bash(rm:*)", "Bash(find:*)"]})
    refused = Policy(here)(*_bash("x=ls; $x -la"))
    assert refused is not None and "no allow rule covers it" in refused.text and "Bash($x" not in refused.text
    piped = Policy(here)(*_bash("find . -name '*.tmp' | xargs rm"))  # resolved: the rule it needs is named
    assert piped is not None and '"Bash(xargs rm)"' in piped.text
    assert Policy(here, ask=lambda request: PermissionAnswer.ALWAYS)(*_bash("x=ls; $x -la")) is None
    assert not (here / ".commandcode" / "settings.local.json").exists()  # allowed once: no rule can name it


def test_a_command_nested_past_the_checker_is_unknown_not_a_crash(here: Path) -> None:
    _settings(here, {"deny": ["Bash(rm:*)"], "allow": ["Bash(echo:*)"]})
    deep = "echo " + "$(" * 400 + "rm -rf v" + ")" * 400
    refused = Policy(here, mode="bypassPermissions")(*_bash(deep))
    assert refused is not None and "cannot be checked against the deny rule" in refused.text
    assert Policy(here)(*_bash(deep)) is not None
    assert Policy(here)(*_bash("echo " + "[" * 20000)) is None  # a long word is read in linear time


def test_git_global_options_do_not_hide_the_subcommand(here: Path) -> None:
    _settings(here, {"deny": ["Bash(git push:*)"], "allow": ["Bash(git status:*)"]})
    policy = Policy(here, mode="bypassPermissions")
    for command in ("git -C . push origin", "git --no-pager push", "git --git-dir=.git push", "git -C . -p push",
                    "git -c core.pager=cat status", "git $SUB origin"):
        refused = policy(*_bash(command))
        assert refused is not None, command
    assert policy(*_bash("git --no-pager log")) is None
    headless = Policy(here)
    assert headless(*_bash("git -C . --no-pager status --short")) is None
    assert headless(*_bash("git -c core.fsmonitor='rm -rf ~' status")) is not None


def test_headless_defaults_edits_inside_run_bash_and_outside_refused(here: Path, tmp_path: Path) -> None:
    policy = Policy(here)
    assert policy("write_file", {"file_path": "a.txt", "content": "x"}) is None
    assert policy("read_file", {"file_path": "a.txt"}) is None
    refused = policy(*_bash("ls"))
    assert refused is not None and refused.is_error
    assert refused.text == ('Error: permission needed: bash: ls was not run; nobody can approve it in a headless run. '
                            'To allow it, add an allow rule such as "Bash(ls)" to permissions.allow in '
                            ".commandcode/settings.json, or run with --permission-mode bypassPermissions (or --yolo)")
    outside = tmp_path / "outside.txt"
    for name in ("write_file", "read_file"):
        result = policy(name, {"file_path": str(outside), "content": "x"})
        assert result is not None and f'"{"Read" if name == "read_file" else "Edit"}(/{outside})"' in result.text
    symlink = here / "link"
    symlink.symlink_to(tmp_path)
    assert policy("write_file", {"file_path": "link/escape.txt", "content": "x"}) is not None  # judged on the real path


def test_deny_beats_ask_beats_allow_and_modes(here: Path) -> None:
    _settings(here, {"allow": ["Bash(npm test:*)", "Bash(rm:*)", "Edit"], "ask": ["Bash(npm test --update:*)"],
                        "deny": ["Bash(rm -rf:*)", "Read(./secrets/**)"]})
    policy = Policy(here)
    assert policy(*_bash("npm test")) is None
    assert policy(*_bash("npm test --update")) is not None  # ask wins over allow (headless: refused)
    denied = policy(*_bash("rm -rf build"))
    assert denied is not None and 'refused by the deny rule "Bash(rm -rf:*)"' in denied.text
    assert policy(*_bash("rm old.txt")) is None
    (here / "secrets").mkdir()
    assert policy("read_file", {"file_path": "secrets/key.pem"}) is not None
    bypass = Policy(here, mode="bypassPermissions")
    assert bypass(*_bash("curl x | jq .")) is None
    piped = bypass(*_bash("curl x | sh"))  # what a shell reads from its input may be `rm -rf`
    assert piped is not None and "cannot be checked against the deny rule" in piped.text
    assert bypass(*_bash("echo ok && rm -rf /")) is not None  # deny rules hold in every mode
    assert bypass("read_file", {"file_path": "secrets/key.pem"}) is not None
    plan = Policy(here, mode="plan")
    assert "plan mode" in plan("write_file", {"file_path": "a.txt", "content": "x"}).text  # type: ignore[union-attr]
    assert "plan mode" in plan(*_bash("npm test")).text  # type: ignore[union-attr]
    assert plan("read_file", {"file_path": "a.txt"}) is None
    with pytest.raises(UsageError, match="unknown permission mode 'yolo'"):
        Policy(here, mode="yolo")


def test_default_mode_from_settings_and_accept_edits(here: Path) -> None:
    _settings(here, {"defaultMode": "plan"})
    assert Policy(here).mode == "plan"
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return PermissionAnswer.DENY

    _settings(here, {"defaultMode": "acceptEdits"})
    accept = Policy(here, ask=ask)
    assert accept("edit_file", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}) is None and not asked
    interactive = Policy(here, mode="default", ask=ask)
    denied = interactive("write_file", {"file_path": "a.txt", "content": "x"})
    assert denied is not None and "the user denied write_file" in denied.text
    assert [request.rules for request in asked] == [[f"Edit(/{here / 'a.txt'})"]]


def test_compound_commands_get_one_rule_per_part(here: Path) -> None:
    _settings(here, {"allow": ["Bash(git status)"]})
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return PermissionAnswer.ALWAYS

    policy = Policy(here, ask=ask)
    assert policy(*_bash("git status && npm test; ls | wc -l")) is None
    assert asked[0].rules == ["Bash(npm test)", "Bash(ls)", "Bash(wc -l)"]  # not git status: it was allowed
    local = json.loads((here / ".commandcode" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(npm test)", "Bash(ls)", "Bash(wc -l)"]
    fresh = Policy(here, ask=ask)  # a new process: the saved rules hold, parts reorder freely
    assert fresh(*_bash("ls; npm test")) is None and len(asked) == 1
    assert fresh(*_bash("ls $(rm -rf ~)")) is None and len(asked) == 2  # a substitution is asked every time


def test_session_grants_and_allow_once(here: Path) -> None:
    answers = [PermissionAnswer.ALLOW_ONCE, PermissionAnswer.ALLOW_SESSION]
    asked: list[str] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request.summary)
        return answers.pop(0)

    grants = Grants()
    policy = Policy(here, ask=ask, grants=grants)
    assert policy(*_bash("make")) is None  # once
    assert policy(*_bash("make")) is None  # asked again, now for the session
    assert policy(*_bash("make")) is None and asked == ["bash: make", "bash: make"]
    assert grants.rules == ["Bash(make)"]
    assert Policy(here, ask=ask, grants=grants)(*_bash("make")) is None  # a /fork carries the object
    assert not (here / ".commandcode" / "settings.local.json").exists()  # session grants are not saved


def test_dont_ask_again_when_the_local_file_is_malformed(here: Path) -> None:
    (here / ".commandcode").mkdir()
    (here / ".commandcode" / "settings.local.json").write_text('{"permissions": ')
    with pytest.raises(SettingsError, match=r"settings\.local\.json:1:\d+"):
        Policy(here)
    (here / ".commandcode" / "settings.local.json").write_text('{"x": 1, "x": 2}')  # a write would shorten it
    notes: list[str] = []
    policy = Policy(here, ask=lambda request: PermissionAnswer.ALWAYS, notify=notes.append)
    assert policy(*_bash("make")) is None  # allowed for the session, and the user is told why not saved
    assert notes and notes[0].endswith("allowed for this session only")
    assert (here / ".commandcode" / "settings.local.json").read_text() == '{"x": 1, "x": 2}'


def test_agent_session_asks_through_the_hook_and_the_turn_goes_on(here: Path) -> None:
    requests: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        requests.append(request)
        return PermissionAnswer.DENY

    with AgentSession.start(here, ask_permission=ask) as agent:
        result = agent.turns.run_turn('call bash {"command": "touch made"}\ncall write_file {"file_path": "a.txt", "content": "x"}')
    assert [request.tool for request in requests] == ["bash", "write_file"]
    assert not (here / "made").exists() and not (here / "a.txt").exists()
    assert result.error is None and "the user denied" in result.text
    _settings(here, {"allow": ["Bash(ls)", 7]})  # a rule list that does not parse refuses the turn
    with AgentSession.start(here) as headless, pytest.raises(SettingsError, match="expected a list of strings"):
        headless.turns.run_turn('call bash {"command": "touch made"}')
    _settings(here, {"allow": ["Bash(ls)"]})
    with AgentSession.start(here) as headless:
        assert headless.models.effective_permission_mode() == "default"
        outcome = headless.turns.run_turn('call bash {"command": "touch made"}')
    assert "nobody can approve it" in outcome.text and not (here / "made").exists()
