"""semcache validator package (see DESIGN.md)."""
