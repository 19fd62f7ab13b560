"""The suite's one conftest: it loads the shared fixtures (`tests/helpers/fixtures.py`) as a
plugin, so every test folder gets the same `home`, `workdir`, `project`, `umask_022` and
`cli_in_home` without importing them."""

pytest_plugins = ["helpers.fixtures", "helpers.workspace"]
