"""The command groups of a DBOS system database (``qctl.systems.dbos``), one module per
noun: the root command picks these instead of azync's when the database holds DBOS's
tables.

Shared nouns keep azync's names and flags where they mean the same (``--name``,
``--state``, ``--limit``, ``--after``, ``--older-than``, ``--refresh``, ``-o``,
``--dry-run``, ``--yes``); ``--status``, DBOS's own word, stays accepted beside
``--state``; tests/dbos/test_shared_flags.py lists the flags only one system has.
Field names are DBOS's own (``WorkflowStatus``/``StepInfo`` of ``dbos/_sys_db.py``); in
JSON, instants are epoch milliseconds as DBOS stores them and payloads are their
symbolic decoding (``qctl.systems.dbos.payload``).
"""
