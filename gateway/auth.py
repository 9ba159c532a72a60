"""Who is calling: the tenant from the API key, and the admin bearer token."""
from __future__ import annotations

import hmac

from litestar import Request

from gateway.errors import GatewayError
from gateway.settings import Settings


def authenticate(request: Request, settings: Settings) -> str:
    """The tenant: from the API key when keys are configured (never from a header), else 'default'."""
    if not settings.api_keys:
        return "default"
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    tenant = settings.api_keys.get(key.strip()) if scheme.lower() == "bearer" else None
    if tenant is None:
        raise GatewayError(401, "a valid API key is required: send 'Authorization: Bearer <key>'",
                           code="invalid_api_key")
    return tenant


def admin_guard(connection, _handler) -> None:
    settings: Settings = connection.app.state.settings
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    scheme, _, given = connection.headers.get("authorization", "").partition(" ")
    if not token or scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise GatewayError(401, "the admin API needs 'Authorization: Bearer <SEMCACHE_ADMIN_TOKEN>'"
                           + ("" if token else " (no admin token is configured)"), code="invalid_admin_token")
