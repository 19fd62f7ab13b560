"""The project context of a launch: where a session runs and the settings that apply there,
resolved once and passed down (`ProjectContext`).

It holds the working directory, the repository root (the git root whose settings apply,
`settings_files.repository_root`), the main checkout (the one rule, `settings_files.
main_checkout`: read from the files alone; `workspace.worktrees` asks it too), the session
folder (`paths.sessions_folder`) and the merged `Settings` with their warnings. The settings are
read on first use (start-up is a feature: a new session's first prompt never reads them) and
kept; `refresh()` rereads them after a settings write (`/config set`, a saved model or
permission answer). The one rule for a malformed settings file: `settings()` raises the
`SettingsError` naming the file, line and column, every time it is asked, until `refresh()`
finds the file fixed; a caller shows that one line and runs nothing that would need the
settings (never a traceback, never running wider open than the settings say).

Services take the caller's context (`for_settings_of` when they are given a folder and maybe a
context: a library caller with none gets the folder's own).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..errors import SettingsError
    from .settings import Settings


class ProjectContext:
    """The paths and settings of one working directory (see the module docstring)."""

    def __init__(self, cwd: str | os.PathLike[str]) -> None:
        from .settings_files import main_checkout, repository_root, session_worktree_main

        self.cwd = os.path.abspath(os.fspath(cwd))
        self.repository_root = repository_root(self.cwd)
        self.main_checkout = main_checkout(self.repository_root)
        self.settings_root = session_worktree_main(self.repository_root) or self.repository_root  # its project layers
        self._settings: Settings | None = None
        self._error: SettingsError | None = None

    @property
    def sessions_folder(self) -> str:
        """The folder under `<data dir>/projects` that holds this directory's sessions."""
        from .paths import sessions_folder

        return sessions_folder(self.cwd)

    def settings(self) -> Settings:
        """The merged settings, read once (until `refresh()`).

        Raises:
            SettingsError: a settings file is malformed, unreadable or not a regular file.
        """
        if self._settings is None and self._error is None:
            from ..errors import SettingsError
            from .settings import load_settings

            try:
                self._settings = load_settings(self.cwd)
            except SettingsError as error:
                self._error = error
        if self._error is not None:
            raise self._error
        assert self._settings is not None
        return self._settings

    @property
    def warnings(self) -> list[str]:
        """What the settings files said that was ignored (unknown values); none when malformed."""
        from ..errors import SettingsError

        try:
            return list(self.settings().warnings)
        except SettingsError:  # the malformed file is `settings()`'s one line, not a warning
            return []

    def refresh(self) -> ProjectContext:
        """Forgets the settings read, so the next `settings()` rereads them (after a write)."""
        self._settings, self._error = None, None
        return self


def for_settings_of(folder: str | os.PathLike[str], given: ProjectContext | None) -> ProjectContext:
    """`given` when the settings that apply in `folder` are its own (the same project settings
    root), else `folder`'s own context (a library caller that passed none, or another project)."""
    if given is not None and given.cwd == os.path.abspath(os.fspath(folder)):
        return given
    from .settings_files import repository_root, session_worktree_main

    root = repository_root(folder)
    if given is not None and os.path.realpath(session_worktree_main(root) or root) == os.path.realpath(given.settings_root):
        return given
    return ProjectContext(folder)
