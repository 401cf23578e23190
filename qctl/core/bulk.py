"""What a batched maintenance statement's part-way stop reports (azync's vacuums, a
dispatch vacuum, ``jobs vacuum-dead``): the rows its committed batches did. The operator
verbs report through the verb engine's result (``qctl.core.verbs``) instead."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Report:
    """Batched work stopped part-way: ``rows`` done in ``batches`` committed
    transactions (they stay done; the same command run again finishes), and why it
    stopped."""

    rows: int
    batches: int
    error: str
