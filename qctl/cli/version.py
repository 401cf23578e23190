"""``qctl version``: qctl's own version (a DBOS application's are ``qctl versions``)."""

from __future__ import annotations

import typer

from qctl import __version__


def version() -> None:
    """Print qctl's version, as --version does."""
    typer.echo(f"qctl {__version__}")
