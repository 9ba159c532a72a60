"""semcache gateway package (see DESIGN.md)."""
