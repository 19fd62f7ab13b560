"""Which launches draw the prompt before their session is made (`Launch.plain_new_session`):
only a new session with nothing to check first; anything that can refuse the launch (a session
to find, a name to take, a model or effort to resolve) is made before the prompt."""

from __future__ import annotations

import pytest

from commandcode.shell.launch import parse_launch


@pytest.mark.parametrize(("argv", "warm"), [
    ([], True),
    (["--permission-mode", "plan"], True),
    (["--yolo"], True),
    (["--no-session"], True),
    (["-n", "x"], False),
    (["-r"], False),
    (["-r", "abc"], False),
    (["--sessions"], False),
    (["-c"], False),
    (["--session", "a.jsonl"], False),
    (["-c", "--fork-session"], False),
    (["--model", "local/x"], False),
    (["--effort", "high"], False),
])
def test_only_a_plain_new_session_is_made_behind_the_prompt(argv: list[str], warm: bool) -> None:
    launch = parse_launch(argv)
    assert launch is not None
    assert launch.plain_new_session is warm
