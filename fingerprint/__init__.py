"""semcache fingerprint package (see DESIGN.md)."""
