"""The test suite's support package: what many test files share, loaded once.

- `helpers.fixtures`: every shared pytest fixture (the one `home`, `workdir`, `project`,
  `umask_022`, `cli_in_home`), registered as a plugin by `tests/conftest.py`;
- `helpers.locations`: where the suite's files are (fixtures, support scripts, the samples);
- `helpers.cli`: running `commandcode` as a subprocess and reading what it wrote;
- `helpers.checkpoints`: trees, tmpfs mounts and fresh session files for the checkpoint tests;
- `helpers.fake_shell`: a recording `Shell` for slash commands' unit tests;
- `helpers.terminal`: the shell in a real pty (pexpect + pyte) or in tmux;
- `helpers.crash_harness`: the crash-injection harness (also run by `benches/crash_harness.py`);
  its workspace and checks (`crash_workspace`, `crash_checks`), its points (`crash_runs`), and
  the operations with modules of their own (`crash_branching`, `crash_interop`, `crash_sweep`,
  `crash_shell_baseline`).

`tests/` is on `sys.path` through `pythonpath` in `pyproject.toml`, so a test imports these as
`from helpers.cli import ...`; test files themselves are imported with `--import-mode=importlib`
(same basenames in different folders are fine, and no test imports another).
"""
