"""Talking to a team share service: where it is (settings `{"share": {"server": "http://host:port",
"token": "$VAR"}}`, the token named as `apiKey` is: `$VAR`, `{env:VAR}` or `!command`, never the
token itself) and its HTTP API (share/service/app.py). Every failure is one `ShareServiceError`
line: `status` 0 when nothing answered (the service is down or unreachable)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import weakref
from typing import Any

from ..errors import SettingsError, ShareServiceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext

SETTINGS_HINT = 'set {"share": {"server": "http://host:port", "token": "$VAR"}} in ~/.commandcode/settings.json'
TIMEOUT_SECONDS = 10.0


class Service:
    """The team service named by the settings, its token resolved."""

    def __init__(self, server: str, token: str) -> None:
        self.server, self.token = server.rstrip("/"), token

    def link(self, share_id: str, secret: str) -> str:
        return f"{self.server}/s/{share_id}?secret={secret}"

    def call(self, path: str, body: dict[str, Any] | None, *, timeout: float = TIMEOUT_SECONDS) -> dict[str, Any]:
        """POSTs `body` (GET without one); the JSON answer.

        Raises:
            ShareServiceError: the service refused (its status and one line) or did not answer (status 0).
        """
        request = urllib.request.Request(self.server + path, data=None if body is None else json.dumps(body).encode(),
                                         method="GET" if body is None else "POST",
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                answer = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                reason = json.loads(error.read()).get("error") or error.reason
            except (ValueError, AttributeError, OSError):
                reason = error.reason
            hint = "check share.token in your settings (`commandcode share token create USER` on the service host)" \
                if error.code == 401 else None
            raise ShareServiceError(f"the share service refused: {reason}", status=error.code, hint=hint) from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            detail = getattr(error, "reason", None) or error
            raise ShareServiceError(f"the share service at {self.server} does not answer ({detail})", status=0,
                                    hint="the page catches up when it is back") from None
        if not isinstance(answer, dict):
            raise ShareServiceError("the share service gave an answer that is not a JSON object", status=502)
        return answer


_resolved: weakref.WeakKeyDictionary[ProjectContext, tuple[object, Service]] = weakref.WeakKeyDictionary()
"""The service each project context's settings named, with the settings it was read from: a
`!command` token runs once per settings read (`commandcode share` checks the service, then
publishes), not once per question."""


def configured(project: ProjectContext | None = None) -> Service | None:
    """The service the settings name: `project`'s (the caller's context, whose resolved token is
    kept until its settings are read again), else those of the current directory (None: shares
    use the one-machine server).

    Raises:
        SettingsError: `share.server` or `share.token` is malformed; the token's variable is unset or
            its command fails.
    """
    from ..config.context import ProjectContext

    context = project if project is not None else ProjectContext(os.getcwd())
    settings = context.settings()
    known = _resolved.get(context)
    if known is not None and known[0] is settings:
        return known[1]
    service = _service(settings.get("share"))
    if service is not None:
        _resolved[context] = (settings, service)
    return service


def _service(value: object) -> Service | None:
    from ..config.keyref import is_reference, resolve_reference

    if value is None or (isinstance(value, dict) and value.get("server") is None):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("server"), str) \
            or not value["server"].startswith(("http://", "https://")):
        raise SettingsError("settings: share.server must be the service's http:// or https:// address", hint=SETTINGS_HINT)
    token = value.get("token")
    if not isinstance(token, str) or not token:
        raise SettingsError("settings: share.token is missing", hint=SETTINGS_HINT)
    if not is_reference(token):
        raise SettingsError("settings: share.token looks like a raw token and is refused",
                         hint='name it instead: "$VAR", "{env:VAR}" or "!command"')
    return Service(value["server"], resolve_reference(token, owner="share", field="share.token",
                                                      where="your settings", error=SettingsError))
