"""The prefix rule a permission question offers for each program a command runs."""

from __future__ import annotations

import pytest

from commandcode.agent.permissions import Rule
from commandcode.workspace.command_prefix import prefix_rule, wider_rules
from commandcode.workspace.shell_commands import invocations


@pytest.mark.parametrize(("command", "prefixes"), [
    ("npm test --watch", ["Bash(npm test:*)"]),
    ("git -C . --no-pager push origin main", ["Bash(git push:*)"]),  # the grammar's git normalization
    ("ls -la", ["Bash(ls:*)"]),
    ("FOO=1 nice -n 5 make check", ["Bash(make check:*)"]),  # the wrapper is gone, the program stays
    ("npm --prefix x test", [None]),  # options before the subcommand: npm:*-wide, so none
    ("python3 script.py", [None]),  # any code at all
    ("sh -c 'cargo build && rm -rf target'", ["Bash(cargo build:*)", None]),  # the string's commands
    ("rm -rf build", [None]),
    ("find . -name x -exec cat {} ;", [None, "Bash(cat:*)"]),
    ("$TOOL run", [None]),
    ("source env.sh", [None]),
])
def test_prefixes(command: str, prefixes: list[str | None]) -> None:
    assert [prefix_rule(call) for call in invocations(command)] == prefixes


def test_a_compound_command_gets_one_rule_per_part_each_covering_only_its_part() -> None:
    calls = invocations("npm test && npm publish; rm -r dist")
    rules = wider_rules(calls)
    assert rules == ["Bash(npm test:*)", "Bash(npm publish:*)", "Bash(rm -r dist)"]
    test_rule = Rule.parse("Bash(npm test:*)")
    assert test_rule is not None and not test_rule.matches_command("npm test && npm publish")
    assert test_rule.matches_command("npm test -- --watch")
    for rule in rules:
        assert Rule.parse(rule) is not None  # every offered rule parses strictly


def test_no_prefix_at_all_means_no_wider_rules() -> None:
    assert wider_rules(invocations("rm -rf x && python3 -c 1")) is None
