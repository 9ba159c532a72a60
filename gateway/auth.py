"""Who is calling: the tenant from the API key, and the admin bearer token."""
from __future__ import annotations

import hashlib
import hmac

from litestar import Request

from gateway.errors import GatewayError
from gateway.settings import Settings, key_tag


def _credentials(headers) -> tuple[str, str]:
    """(scheme in lower case, credential) of the Authorization header."""
    scheme, _, credential = headers.get("authorization", "").partition(" ")
    return scheme.lower(), credential.strip()


def authenticate(request: Request, settings: Settings) -> str:
    """The tenant: from the API key when keys are configured (never from a header), else 'default'."""
    if not settings.api_keys:
        return "default"
    scheme, key = _credentials(request.headers)
    tenant = settings.api_keys.get(key) if scheme == "bearer" else None
    if tenant is None:
        raise GatewayError(401, "a valid API key is required: send 'Authorization: Bearer <key>'",
                           code="invalid_api_key")
    return tenant


def admin_guard(connection, _handler) -> None:
    settings: Settings = connection.app.state.settings
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    scheme, given = _credentials(connection.headers)
    if not token or scheme != "bearer" or not hmac.compare_digest(given.encode(), token.encode()):
        raise GatewayError(401, "the admin API needs 'Authorization: Bearer <SEMCACHE_ADMIN_TOKEN>'"
                           + ("" if token else " (no admin token is configured)"), code="invalid_admin_token")


TRUSTED_HEADER = "x-semcache-admin-token"


def is_trusted_caller(request: Request, settings: Settings) -> bool:
    """Replay and benchmarks may use the engine's internal fields (`forced_output`); they prove it with the
    admin token in `X-Semcache-Admin-Token`. Every other client is untrusted."""
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    given = request.headers.get(TRUSTED_HEADER, "")
    return bool(token) and bool(given) and hmac.compare_digest(given.encode(), token.encode())


def caller_id(request: Request, settings: Settings) -> str:
    """Who is calling, for limits and votes: a hash of the API key when keys are configured (the raw key is
    never stored or logged), else the client address."""
    if settings.api_keys:
        return "key:" + hashlib.sha256(_credentials(request.headers)[1].encode()).hexdigest()[:24]
    client = request.client.host if request.client else "unknown"
    return "addr:" + client


def client_scope(request: Request, settings: Settings, tenant: str) -> str | None:
    """In a tenant with several API keys, each key is a client of its own, which the others need not trust:
    its sessions, its derived conversations and its votes are its own. This is the tag they are kept under
    (a hash of the key), or None in a tenant with one key (its app vouches for its users' session ids) and
    without keys."""
    if tenant not in settings.shared_tenants:
        return None
    return key_tag(_credentials(request.headers)[1])


def operator_guard(connection, _handler) -> None:
    """/metrics and /schema: open on a deployment without credentials; otherwise any API key or the admin
    token (a Prometheus scraper sends one as a bearer token)."""
    settings: Settings = connection.app.state.settings
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    if not settings.api_keys and not token:
        return
    scheme, given = _credentials(connection.headers)
    if scheme == "bearer" and given and (given in settings.api_keys or (
            token and hmac.compare_digest(given.encode(), token.encode()))):
        return
    raise GatewayError(401, "this endpoint needs 'Authorization: Bearer <API key or admin token>'",
                       code="invalid_api_key")
