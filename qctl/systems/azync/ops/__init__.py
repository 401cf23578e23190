"""azync's operations layer: every operator action on an azync store, once.

Rules:

- An action exists once, here: one typed function per verb (``dags.compensate``,
  ``workflows.resolve``, ``maintain.one_pass``, ...). It validates its input, applies
  the system's guards, calls the store and returns a result record from
  ``qctl.systems.azync.ops.results``. Refusals are the exceptions of
  ``qctl.core.errors``. The job verbs (``jobs.VERBS``: retry, run-now, pause, resume,
  archive, delete) are declarations the verb engine (``qctl.core.verbs``) runs instead,
  with the one result shape of every system's verbs.
- Front-ends (azync's ``cli/`` and ``tui/``) call only these for writes: they parse
  input, confirm, call, and render the record. They never call a store's write method.
- Dry runs are answered here too: ``dry_run=True`` validates and counts what the action
  would do and writes nothing, so the command line and the dashboard say the same.
- The guards are azync's *managers*', stricter than its driver: job verbs act on the
  queue and event sources; a DAG task goes through its DAG's verbs and a workflow
  operation through the workflow's (``jobs run-now`` on a DAG task stays allowed, as
  azync's ``dag/manager.go`` does).
- Another system (DBOS) implements its actions in its own package
  (``qctl.systems.dbos.actions``) with the same refusals and records of its own shape.
- No front-end imports (typer, textual) and nothing heavy at import time: the command
  line imports these on every write.
"""
