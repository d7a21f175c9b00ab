"""Count-dependent privacy (not built yet)."""
