"""Provider configuration, read exactly as the real CLI reads it, so a user's files work unchanged.

`providers.json` in the data dir (`$COMMANDCODE_HOME`, else `~/.commandcode`) has a top-level
`provider` (or `providers`) object mapping an id (`^[a-z0-9][a-z0-9_.-]{0,63}$`) to
`{name, baseURL, apiKey, headers, api, models: {MODEL: {contextWindow, maxOutput, reasoning,
reasoningEfforts, cost: {input, output, cacheRead, cacheWrite}}}}`. `api` defaults to
`openai-completions`, the one this build speaks; any other is refused in one line when the
provider is used. `config.json` beside it: its `model` (`provider/model`) is the default model.

`apiKey` is never written anywhere (transcript, meta, errors): it is `false` (none), `"$VAR"` or
`"{env:VAR}"` (an environment variable) or `"!command"` (a shell command's first output line,
run when the provider is first used). Any other string looks like a raw secret pasted into the
file: it is refused with a warning, as the real CLI does, and the provider is used without a key.
`cost` prices are US dollars per million tokens.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ...config.paths import data_root
from ...errors import ProviderError

PROVIDERS_FILE = "providers.json"
CONFIG_FILE = "config.json"
OPENAI_COMPLETIONS = "openai-completions"
DEFAULT_CONTEXT_WINDOW = 128_000
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class ModelSpec:
    """One model of a provider's list."""

    __slots__ = ("context_window", "cost", "max_output", "name", "reasoning", "reasoning_efforts")

    def __init__(self, name: str, data: dict[str, Any]) -> None:
        self.name = name
        window = data.get("contextWindow")
        self.context_window: int = window if isinstance(window, int) and _positive_int(window) else DEFAULT_CONTEXT_WINDOW
        output = data.get("maxOutput")
        self.max_output: int | None = output if isinstance(output, int) and _positive_int(output) else None
        self.reasoning = data.get("reasoning") is True
        efforts = data.get("reasoningEfforts")
        self.reasoning_efforts = [item for item in efforts if isinstance(item, str)] if isinstance(efforts, list) else []
        cost = data.get("cost")
        self.cost: dict[str, float] = ({key: float(value) for key, value in cost.items()
                                        if key in ("input", "output", "cacheRead", "cacheWrite")
                                        and isinstance(value, (int, float)) and not isinstance(value, bool)}
                                       if isinstance(cost, dict) else {})


class ProviderSpec:
    """One provider of `providers.json` (its key still unresolved)."""

    __slots__ = ("api", "api_key", "base_url", "headers", "id", "models", "name")

    def __init__(self, provider_id: str, data: dict[str, Any]) -> None:
        self.id = provider_id
        self.name = data.get("name") if isinstance(data.get("name"), str) else provider_id
        base = data.get("baseURL")
        self.base_url: str = base.rstrip("/") if isinstance(base, str) else ""
        self.api_key: Any = data.get("apiKey", False)
        headers = data.get("headers")
        self.headers: dict[str, str] = ({str(key): value for key, value in headers.items() if isinstance(value, str)}
                                        if isinstance(headers, dict) else {})
        api = data.get("api")
        self.api: str = api if isinstance(api, str) and api else OPENAI_COMPLETIONS
        models = data.get("models")
        self.models: dict[str, ModelSpec] = ({name: ModelSpec(name, spec if isinstance(spec, dict) else {})
                                              for name, spec in models.items()} if isinstance(models, dict) else {})

    def model(self, name: str) -> ModelSpec:
        """The model's spec; one not in the list gets the defaults (the server decides)."""
        return self.models.get(name) or ModelSpec(name, {})


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _read_json(name: str) -> tuple[dict[str, Any], str]:
    path = os.path.join(data_root(), name)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}, path
    except (OSError, UnicodeDecodeError) as error:
        raise ProviderError(f"{path}: cannot be read ({getattr(error, 'strerror', None) or error})") from None
    if not text.strip():
        return {}, path
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProviderError(f"{path}:{error.lineno}:{error.colno}: {error.msg}",
                         hint="fix the file; it was left as it is") from None
    if not isinstance(data, dict):
        raise ProviderError(f"{path}: the top level must be a JSON object")
    return data, path


def load_providers(warnings: list[str] | None = None) -> dict[str, ProviderSpec]:
    """Every provider of `providers.json`, by id; bad ids are skipped with a warning.

    Raises:
        ProviderError: the file is not a JSON object (path:line:col).
    """
    data, path = _read_json(PROVIDERS_FILE)
    table = data.get("provider", data.get("providers"))
    providers: dict[str, ProviderSpec] = {}
    if table is None:
        return providers
    if not isinstance(table, dict):
        raise ProviderError(f"{path}: `provider` must be an object mapping ids to providers")
    for provider_id, spec in table.items():
        if not _ID.match(provider_id) or not isinstance(spec, dict):
            if warnings is not None:
                warnings.append(f"{path}: provider {provider_id!r} skipped (ids match {_ID.pattern}, values are objects)")
            continue
        providers[provider_id] = ProviderSpec(provider_id, spec)
    return providers


def default_model() -> str | None:
    """`config.json`'s `model`, when it is a `provider/model` string."""
    data, _ = _read_json(CONFIG_FILE)
    model = data.get("model")
    return model if isinstance(model, str) and model.strip() else None


def key_form_warning(provider: ProviderSpec) -> str | None:
    """The warning for an `apiKey` that is a raw secret (refused), else None."""
    key = provider.api_key
    if key is False or key is None or not isinstance(key, str) or key == "":
        return None
    from ...config.keyref import is_reference

    if is_reference(key):
        return None
    return (f"providers.json: provider {provider.id}: apiKey looks like a raw secret and is refused; "
            'use "$VAR", "{env:VAR}" or "!command" instead')


def resolve_api_key(provider: ProviderSpec) -> str | None:
    """The key to send (None: no Authorization header).

    Raises:
        ProviderError: the variable it names is unset, or its command fails.
    """
    key = provider.api_key
    if not isinstance(key, str) or key == "" or key_form_warning(provider) is not None:
        return None
    from ...config.keyref import resolve_reference

    return resolve_reference(key, owner=f"provider {provider.id}", field="apiKey", where="providers.json",
                             error=ProviderError)
