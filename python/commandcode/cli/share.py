"""`commandcode share serve [--port P] [--host H] [--store URL [--trusted-proxy ADDR]...]`,
`commandcode share token create|revoke USER --store URL`, `share token list --store URL`,
`commandcode share REF [--expires 24h] [--yes] [--no-copy]` and `commandcode unshare REF`: thin
commands over `share/` (the server and its client). `share REF` prints the link on stdout and
copies it as `/copy` does (`present/clipboard.py`: OSC 52, the tmux buffer, wl-copy/xclip/pbcopy),
saying how on stderr."""

from __future__ import annotations

import errno
import signal
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from ..errors import CommandcodeError, UsageError
from ..present.console import handle_errors, safe, stderr, stdout

DEFAULT_PORT = 7787


def register(app: typer.Typer) -> None:
    app.command("share")(share_command)
    app.command("unshare")(unshare_command)


def _files(ref: str) -> Any:
    from ..catalog.listing import resolve_session

    return resolve_session(ref, Path.cwd())


@handle_errors
def share_command(
    ref: str = typer.Argument(..., help="`serve` to run the share server, `token` (create|revoke USER, list), else the session to share."),
    words: Optional[list[str]] = typer.Argument(None, help="token: `create USER`, `revoke USER` or `list`."),
    store: Optional[str] = typer.Option(None, "--store", help="serve/token: the team service's store, "
                                        "postgresql://... or sqlite:///path (none: the one-machine server)."),
    max_body: int = typer.Option(4 << 20, "--max-body", min=1024, help="serve --store: the largest publish body, bytes."),
    max_per_client: int = typer.Option(256, "--max-per-client", min=1,
                                       help="serve --store: open connections allowed per client address."),
    send_timeout: float = typer.Option(30.0, "--send-timeout", min=0.5, metavar="SECONDS",
                                       help="serve --store: drop a viewer that takes nothing for this long."),
    trusted_proxy: Optional[list[str]] = typer.Option(None, "--trusted-proxy", metavar="ADDR",
                                                      help="serve --store: a load balancer's address or network "
                                                      "(repeatable); its X-Forwarded-For names the client."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="serve: the port (0: any free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="serve: the address to bind (pages then need their secret)."),
    expires: Optional[str] = typer.Option(None, "--expires", help="End the share by itself after 90s, 30m, 24h, 7d..."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Publish without asking."),
    copy: bool = typer.Option(True, "--copy/--no-copy", help="Copy the link to the clipboard (as /copy does)."),
) -> None:
    """Run the share server, or publish a session's live page on it."""
    if ref == "token":
        _token(words or [], store)
        return
    if words:
        raise UsageError(f"unexpected {' '.join(words)!r}", hint="commandcode share REF [--expires 24h]")
    if trusted_proxy and (ref != "serve" or store is None):
        raise UsageError("--trusted-proxy is for the team service", hint="commandcode share serve --store URL "
                         "--trusted-proxy ADDR")
    if ref == "serve":
        if store is not None:
            from ..share.service.main import serve

            serve(store, host, port, max_body=max_body, max_per_client=max_per_client, send_timeout=send_timeout,
                  trusted_proxies=trusted_proxy or ())
            return
        _serve(host, port)
        return
    from ..export.redact import summary
    from ..sharing.client import ensure_running, preview, publish
    from ..sharing.state import parse_expires
    from .launch_project import launch_project

    expires_in = parse_expires(expires)
    files = _files(ref)
    project = launch_project()  # whose settings name the share service
    ensure_running(project)  # before anything is rendered or asked
    shown = preview(files)
    question = f"Share {shown.messages} message(s) of {files.session_id} ({summary(shown.redactions)})?"
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("sharing asks first, and there is no terminal to ask on", hint="pass --yes to publish")
        if not typer.confirm(question, default=False):
            raise CommandcodeError("nothing was shared")
    else:
        stderr.print(safe(question.replace("?", ": publishing")), highlight=False)
    url = publish(files, expires_in=expires_in, project=project)
    stdout.print(safe(url), highlight=False, soft_wrap=True)
    if copy:
        from ..present.clipboard import copy as copy_text

        sys.stdout.flush()  # the link is out before the terminal sees the clipboard's sequence
        stderr.print(safe(copy_text(url)), highlight=False, soft_wrap=True)


@handle_errors
def unshare_command(ref: str = typer.Argument(..., help="Session id, id prefix, name or transcript path.")) -> None:
    """Revoke a session's share: its page ends and its link stops working."""
    from ..sharing.client import unpublish
    from .launch_project import launch_project

    files = _files(ref)
    if not unpublish(files, launch_project()):
        raise CommandcodeError(f"session {files.session_id} is not shared")
    stdout.print(f"unshared {safe(files.session_id)}")


def _token(words: list[str], store: str | None) -> None:
    usage = "expected `commandcode share token create|revoke USER --store URL` or `share token list --store URL`"
    if not ((len(words) == 2 and words[0] in ("create", "revoke")) or words == ["list"]):
        raise UsageError(usage)
    if store is None:
        raise UsageError("a token lives in the team service's store", hint="pass --store postgresql://... or sqlite:///path")
    from ..share.service import main as service

    if words[0] == "create":
        stdout.print(service.create_token(store, words[1]), highlight=False, soft_wrap=True)
    elif words[0] == "revoke":
        done, ended = service.revoke_token(store, words[1])
        said = f"revoked {safe(words[1])}'s publisher token" if done else \
            f"{safe(words[1])}'s publisher token was revoked already"
        if ended:
            said += f"; {ended} live share{'s' if ended != 1 else ''} of theirs ended"
        stdout.print(said, highlight=False)
    else:
        users = service.list_tokens(store)
        if not users:
            stderr.print("no publisher tokens yet: `commandcode share token create USER --store URL` makes one",
                         highlight=False)
        width = max((len(user[0]) for user in users), default=0)
        for name, created_ms, active, live in users:
            made = time.strftime("%Y-%m-%d %H:%M", time.localtime(created_ms / 1000))
            stdout.print(f"{safe(name):<{width}}  {'active' if active else 'revoked':<7}  since {made}  "
                         f"{live} live share(s)", highlight=False, soft_wrap=True)


def _serve(host: str, port: int) -> None:
    from ..share.server import ShareServer

    try:
        server = ShareServer(host, port)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise CommandcodeError(f"port {port} is in use on {host}", hint="pick another with --port") from None
        raise CommandcodeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    stderr.print(f"serving shares at {safe(server.shares.base_url)} (Ctrl-C to stop)", highlight=False)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
