"""``python -m qctl``: the command line."""

from qctl.cli.launch import run

run()
