"""``python -m qctl``: the command line."""

from qctl.cli.main import run

run()
