"""Client scopes: in a tenant with several API keys each key is a client of its own (gateway/auth.py,
`client_scope`), whose session ids are kept under its tag so that no other client can name them."""
from __future__ import annotations

SCOPE_SEP = "/"


def scoped_session(scope: str | None, session: str | None) -> str | None:
    """The session id a client's own id is kept under: prefixed with its scope, which the client cannot choose
    (a client's id that looks like another client's prefix is prefixed again)."""
    return session if scope is None or session is None else f"{scope}{SCOPE_SEP}{session}"


def scope_of(session: str | None) -> str | None:
    """The client scope a scoped session id was kept under (None for an unscoped one)."""
    return session.split(SCOPE_SEP, 1)[0] if session and SCOPE_SEP in session else None
