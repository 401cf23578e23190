"""What the bulk verbs of every system share."""

SAMPLE = 5
"""How many of the targets a bulk dry run lists (it counts them all)."""
