"""Which model a name addresses: `offline` (the built-in model), or `provider/model` from
`providers.json`; with no name, `config.json`'s `model`, else the offline model.

Raises one-line errors for a name that addresses nothing: an unknown provider (naming the ones
configured), a name that is not `provider/model`. A raw-secret `apiKey` is refused with a
warning (to `warn`) and the provider is used without a key, as the real CLI does.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import UsageError
from .base import Model
from .offline import MODEL_ID as OFFLINE_ID
from .offline import OfflineModel

OFFLINE_NAMES = ("offline", OFFLINE_ID)


def _ignore(message: str) -> None:
    del message


def resolve_model(name: str | None = None, *, warn: Callable[[str], None] = _ignore) -> Model:
    """The model `name` addresses (see the module docstring).

    Raises:
        UsageError: no such provider, or a name that is not `provider/model`; a malformed
            providers.json or config.json (path:line:col).
    """
    from .config import default_model

    chosen = name.strip() if name is not None else default_model()
    if chosen is None or chosen in OFFLINE_NAMES:
        return OfflineModel()
    provider_id, slash, model_name = chosen.partition("/")
    if not slash or not provider_id or not model_name:
        raise UsageError(f"unknown model {chosen!r}", hint="name a model as provider/model (or offline)")
    from .config import key_form_warning, load_providers

    warnings: list[str] = []
    providers = load_providers(warnings)
    for line in warnings:
        warn(line)
    provider = providers.get(provider_id)
    if provider is None:
        known = ", ".join(sorted(providers)) or "none configured"
        raise UsageError(f"unknown provider {provider_id!r} in model {chosen!r}",
                         hint=f"providers in providers.json: {known}; the built-in model is `offline`")
    refused = key_form_warning(provider)
    if refused is not None:
        warn(refused)
    from .openai import OpenAIChatModel

    return OpenAIChatModel(provider, provider.model(model_name))


def model_provider(model_id: str) -> str | None:
    """The provider id of a `provider/model` id (meta's `modelProvider`), None for the offline model."""
    if model_id in OFFLINE_NAMES:
        return None
    provider, slash, _ = model_id.partition("/")
    return provider if slash else None
