"""`/share`, `/share gist [html|md|jsonl]` and `/unshare` (the share server and gists: `share/`).

`/share` shows what will leave (messages, secrets redacted) and asks; then publishes the session
on the running share server, prints the link and copies it (`Shell.copy`); `/share --expires 24h`
(90s, 30m, 7d, 2w) ends the share by itself, as `commandcode share REF --expires` does. The page
follows every later commit by itself (the server watches the transcript), also after a resume.
`/share` on a shared session re-copies its link (re-arming it on a restarted server; with
`--expires`, with the new end). `/unshare` revokes it.
"""

from __future__ import annotations

from ...errors import CommandcodeError, UsageError
from ...export.redact import summary
from ...export.target import FORMATS
from ..slash import Shell, SlashCommand


def _expires(words: list[str]) -> tuple[float | None, str]:
    """`(seconds, as typed)` of `--expires D` / `--expires=D` (the only option `/share` takes),
    `(None, "")` without it."""
    from ...sharing.state import parse_expires

    usage = UsageError(f"/share does not take {' '.join(words)!r}",
                       hint="use /share [--expires 24h] or /share gist [html|md|jsonl]")
    if not words:
        return None, ""
    if words[0].startswith("--expires="):
        value, rest = words[0].split("=", 1)[1], words[1:]
    elif words[0] == "--expires" and len(words) > 1:
        value, rest = words[1], words[2:]
    else:
        raise usage
    if rest:
        raise usage
    return parse_expires(value), value.strip()


def run_share(shell: Shell, args: str) -> None:
    from ...sharing.client import current, ensure_running, preview, publish

    words = args.split()
    if words and words[0] == "gist":
        _gist(shell, words[1:])
        return
    expires_in, typed = _expires(words)
    files, project = shell.agent.files, shell.project  # the session's context: its settings name the service
    ensure_running(project)
    if current(files) is not None:  # the same link and secret; a restarted server serves it again
        url = publish(files, expires_in=expires_in, follow=True, notice=shell.notice, project=project)
        shell.print(f"Shared at {url}" + (" (with the new expiry)" if expires_in is not None else ""))
        shell.notice(shell.copy(url))
        return
    shown = preview(files)
    ends = f" It ends by itself in {typed}." if expires_in is not None else ""
    if not shell.confirm(f"Publish {shown.messages} message(s) of this session ({summary(shown.redactions)}) "
                         f"on the share server? Later turns appear on the page as they are committed.{ends}"):
        shell.notice("nothing was shared")
        return
    url = publish(files, expires_in=expires_in, follow=True, notice=shell.notice, project=project)
    shell.print(f"Shared at {url}")
    shell.notice(shell.copy(url))


def _gist(shell: Shell, words: list[str]) -> None:
    from ...share.gist import create_gist

    if len(words) > 1 or (words and words[0] not in FORMATS):
        raise UsageError(f"unknown gist format {' '.join(words)!r}", hint="use /share gist [html|md|jsonl]")
    fmt = words[0] if words else shell.project.settings().default_share_gist_format
    url = create_gist(shell.agent.files, fmt)
    shell.print(f"Secret gist ({fmt}) at {url}")
    shell.notice(shell.copy(url))


def run_unshare(shell: Shell, args: str) -> None:
    from ...sharing.client import unpublish

    if args.strip():
        raise UsageError("/unshare takes no arguments")
    if not unpublish(shell.agent.files, shell.project):
        raise CommandcodeError("this session is not shared")
    shell.print("Unshared: the link no longer works and the open pages ended")


def complete(shell: Shell, prefix: str) -> list[str]:
    options = ["gist", *(f"gist {name}" for name in FORMATS), "--expires "]
    return [option for option in options if option.startswith(prefix)]


COMMANDS = [
    SlashCommand("share", run_share, "Publish a live page of this session, or a secret gist",
                 help="/share [--expires 24h]: show what will leave (messages, secrets redacted), ask, publish on "
                      "the share server (`commandcode share serve`), print and copy the link; the page follows every "
                      "later turn; --expires ends the share by itself (90s, 30m, 24h, 7d, 2w). "
                      "/share again re-copies it. /share gist [html|md|jsonl]: a secret GitHub gist through gh "
                      "(format from the defaultShareGistFormat setting).", complete=complete),
    SlashCommand("unshare", run_unshare, "Revoke this session's share link"),
]
