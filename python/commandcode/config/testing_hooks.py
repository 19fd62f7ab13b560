"""Every test hook of commandcode, listed and documented in one place so none hides in a corner.

A test hook is a way in that only the tests use: it widens the window a test aims a signal or a
kill at, or makes one step fail as a full disk would. Each does nothing unless a test sets it, and
nothing outside the tests does. A new hook is added to `HOOKS` (and read here, when it comes from
the environment): `tests/unit/config/test_testing_hooks.py` fails on any `COMMANDCODE_TEST_*` name
in `python/` or `tests/` that `HOOKS` or `TESTS_OWN` does not list, and on a listed hook its
module no longer names.

From the environment (a test sets it on a real process it starts; read when asked, never cached):
- `COMMANDCODE_TEST_STEP_DELAY_MS` — milliseconds a `commandcode rewind` waits before each restore
  step (`cli/rewind.py` hands it to the native restore as the `step_delay_ms` fault below); the
  signal and crash tests aim at that window.
- `COMMANDCODE_TEST_SETTLE_PAUSE_MS` — milliseconds a restore's settle (the flush and the
  journal's removal after the commit returned, `rust/src/store/restore/settle.rs`) sleeps before
  its flush, before the companion copy's removal, between it and the journal's removal and after
  that (`checkpoints/store.py` hands it to the native commit); the crash tests aim their kills at
  those points.
- `COMMANDCODE_TEST_GUARD_DELAY_MS` — milliseconds a `bash` command's registration with the guard
  is put off after its fork (`agent/bash_guard.py`); the guard tests aim at that window.

As arguments (a test passes them in process, or to the child script it kills):
- `RewindOptions.faults` (`checkpoints/rewind.py`), a dict of the three below, which
  `checkpoints/rewind_code.py` hands to the native restore (`rust/src/python/prepared.rs`).
- `fail_before_step` — the restore fails before its N-th step (the rollback tests).
- `step_delay_ms` — the pause before each restore step (what the environment hook above sets).
- `keep_pause_ms` — the pause while a redo point keeps the files a restore replaces
  (`PreparedRestore.keep(pause_ms=...)`, `checkpoints/store.py`): the redo-point crash test.

The tests' own wrappers and helpers read the names in `TESTS_OWN` (`tests/support/killable_cli.py`:
`COMMANDCODE_TEST_KILL_AT`, `..._FAIL_AT`, `..._COUNT_FILE`, a kill or a failure at the N-th
mutating call and the count of such calls): no product code reads them, and none may use their
names for anything else.
"""

from .env import whole_number

STEP_DELAY_MS = "COMMANDCODE_TEST_STEP_DELAY_MS"
GUARD_DELAY_MS = "COMMANDCODE_TEST_GUARD_DELAY_MS"
SETTLE_PAUSE_MS = "COMMANDCODE_TEST_SETTLE_PAUSE_MS"

HOOKS: dict[str, str] = {
    # hook -> the module (under python/commandcode/) that acts on it; the docstring says how
    STEP_DELAY_MS: "cli/rewind.py",
    GUARD_DELAY_MS: "agent/bash_guard.py",
    SETTLE_PAUSE_MS: "checkpoints/store.py",
    "fail_before_step": "checkpoints/rewind_code.py",
    "step_delay_ms": "checkpoints/rewind_code.py",
    "keep_pause_ms": "checkpoints/rewind_code.py",
}

TESTS_OWN = ("COMMANDCODE_TEST_KILL_AT", "COMMANDCODE_TEST_FAIL_AT", "COMMANDCODE_TEST_COUNT_FILE",
             "COMMANDCODE_TEST_NPM_CACHE", "COMMANDCODE_TEST_HOSTILE_INDEX")


def rewind_faults() -> dict[str, int] | None:
    """The faults a `commandcode rewind` hands to the native restore: `COMMANDCODE_TEST_STEP_DELAY_MS`
    as `step_delay_ms` when it is a whole number; unset (always, outside tests): none."""
    delay = whole_number(STEP_DELAY_MS)
    return {"step_delay_ms": delay} if delay is not None else None


def guard_delay_ms() -> int | None:
    """`COMMANDCODE_TEST_GUARD_DELAY_MS`, when it is a whole number."""
    return whole_number(GUARD_DELAY_MS)


def settle_pause_ms() -> int:
    """`COMMANDCODE_TEST_SETTLE_PAUSE_MS` when it is a whole number, else 0."""
    return whole_number(SETTLE_PAUSE_MS) or 0
