"""`exactdp sweep` (not built yet)."""


def register(subparsers) -> None:  # pragma: no cover - placeholder until built
    return None
