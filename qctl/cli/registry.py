"""qctl's own commands, beside every system's (``System.commands``): which module holds
each and its one-line help. The root group builds a command only when it runs (building
Typer commands from signatures is the slow part of start-up), so ``qctl --help`` reads
these tables instead of importing every group."""

from __future__ import annotations

from qctl.systems import Entry

SYSTEMLESS_COMMANDS: dict[str, Entry] = {
    "demo": Entry("qctl.cli.demo", "demo", "A live demo workload, watched in qctl top."),
    "audit": Entry(
        "qctl.cli.audit", "app", "The audit trail of qctl's writes: list (newest first), init."
    ),
    "context": Entry(
        "qctl.cli.contexts", "app", "Named contexts: list, current, use, add, delete."
    ),
    "version": Entry("qctl.cli.version", "version", "qctl's version (as --version)."),
}
"""Commands about qctl itself rather than a database, and the demo (its ``--system``
picks the workload): the same for every system, and run without detecting one."""
