"""A noun two systems share keeps the same flags: for every verb both systems have, an
option of one system is either on the other under the same names (short form included,
flag or value alike) or listed here as meaningful for that system only, with why."""

from __future__ import annotations

from typing import Any

import pytest
from typer._click import Context

from qctl.cli.main import build
from qctl.systems import get

AZYNC_ONLY: dict[str, set[str]] = {
    # azync counts queue depths from estimates unless asked; DBOS's are exact (partial
    # indexes). Job sources (queue, event, dag, workflow) are azync's.
    "queues list": {"--exact", "--source", "-s"},
    # Change hints carry an entity and a source; DBOS has no hints (watch polls).
    "watch": {"--entity", "-e", "--source", "-s"},
    # azync's vacuum takes an age per kind of row (and a source); DBOS has workflows only.
    "vacuum all": {"--completed", "--dags", "--dead", "--source", "-s", "--stats", "--workflows"},
}
FILTERS = {
    "--application-name", "--application-version", "--app-version", "--attribute",
    "--completed-after", "--completed-before", "--created-after", "--created-before",
    "--dequeued-after", "--dequeued-before", "--executor", "--forked", "--not-forked",
    "--has-parent", "--no-parent", "--parent", "--prefix", "--queue", "--schedule",
    "--status", "--user",
}  # fmt: skip
"""DBOS's filter fields (``list_workflows`` of dbos/_sys_db.py), the same on list and on
every verb that selects by filter (``qctl.systems.dbos.cli.filters.FILTERS``)."""
DBOS_ONLY: dict[str, set[str]] = {
    "workflows list": FILTERS,
    # A payload exactly as stored (DBOS's pickles and JSON text): azync's show prints
    # its job's payload whole already.
    "workflows show": {"--raw", "--raw-to"},
    # --older-than: a global timeout over every unfinished workflow (azync's cancel
    # takes one execution by id); --children: DBOSClient's cancel_children.
    # --plan-out/--plan: DBOS's bulk verbs run on the verb engine (azync's by id do not).
    "workflows cancel": FILTERS
    | {"--max", "--name", "--older-than", "--state", "--children", "--plan", "--plan-out"},
    # Bulk resume selects by filter, so it previews (--dry-run); DBOS resumes onto a queue.
    # azync resumes one execution by id and asks nothing; DBOS's bulk form asks (--yes).
    # Both show --reason, as every write does.
    "workflows resume": FILTERS
    | {"--dry-run", "--max", "--name", "--on-queue", "--state", "--yes", "-y"}
    | {"--plan", "--plan-out"},
    # Which finished statuses to delete, the batch size of its short transactions, and
    # the newest of each name to keep (a DBOS workflow's name is its function).
    "vacuum workflows": {"--batch", "--keep-last", "--state", "--status"},
    # The same verb on DBOS (workflows are all it has to vacuum); --older-than is every
    # system's.
    "vacuum all": {"--batch", "--keep-last", "--state", "--status"},
    # Workflow names are DBOS's watch filter (azync's hints carry none); DBOS's watch
    # polls, named --refresh as top's interval on both systems, where azync's is pushed.
    "watch": {"--name", "--refresh"},
}
"""``--status`` is DBOS's word for ``--state``: accepted beside it wherever ``--state``
is, never instead of it (``test_status_is_an_alias_of_state``)."""


def _verbs(command: Any, path: str) -> dict[str, dict[str, bool]]:
    """Each leaf command under ``command``: its option names, each with whether it is a
    flag (takes no value)."""
    if hasattr(command, "list_commands"):
        # Through the group's own lookup: a noun's verbs are made on first use.
        ctx = Context(command, info_name=path)
        out: dict[str, dict[str, bool]] = {}
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if not sub.hidden:
                out.update(_verbs(sub, f"{path} {name}"))
        return out
    return {
        path: {
            opt: bool(p.is_flag)
            for p in command.params
            if p.param_type_name == "option" and not p.hidden  # the --yes every verb takes
            for opt in (*p.opts, *p.secondary_opts)
        }
    }


def _shared() -> list[tuple[str, dict[str, bool], dict[str, bool]]]:
    azync, dbos = get("azync"), get("dbos")
    rows = []
    for noun in sorted(set(azync.commands) & set(dbos.commands)):
        a = _verbs(build(noun, azync.commands[noun]), noun)
        d = _verbs(build(noun, dbos.commands[noun]), noun)
        rows += [(verb, a[verb], d[verb]) for verb in sorted(set(a) & set(d))]
    return rows


SHARED = _shared()


def test_every_shared_noun_is_compared() -> None:
    nouns = {verb.split()[0] for verb, _, _ in SHARED}
    assert {"workflows", "queues", "vacuum", "watch", "top", "db"} <= nouns
    # Every allowance names a verb both systems have (no stale rows).
    verbs = {verb for verb, _, _ in SHARED}
    assert set(AZYNC_ONLY) <= verbs and set(DBOS_ONLY) <= verbs


@pytest.mark.parametrize(("verb", "azync", "dbos"), SHARED, ids=[v for v, _, _ in SHARED])
def test_shared_verb_has_the_same_flags(
    verb: str, azync: dict[str, bool], dbos: dict[str, bool]
) -> None:
    assert set(azync) - set(dbos) == AZYNC_ONLY.get(verb, set())
    assert set(dbos) - set(azync) == DBOS_ONLY.get(verb, set())
    for name in set(azync) & set(dbos):
        assert azync[name] == dbos[name], f"{verb} {name}: a flag on one system only"


def test_status_is_an_alias_of_state() -> None:
    dbos = get("dbos")
    seen = 0
    for noun in ("workflows", "vacuum"):
        group = build(noun, dbos.commands[noun])
        ctx = Context(group, info_name=noun)
        for verb in group.list_commands(ctx):  # type: ignore[attr-defined]
            for param in group.get_command(ctx, verb).params:  # type: ignore[attr-defined]
                if "--status" in param.opts:
                    assert param.opts[0] == "--state", f"{noun} {verb}"
                    seen += 1
    assert seen >= 4  # workflows list, cancel, resume, delete; vacuum workflows


def test_watch_and_top_name_their_polling_interval_alike() -> None:
    dbos = get("dbos")
    for noun in ("watch", "top"):
        opts = {o for p in build(noun, dbos.commands[noun]).params for o in p.opts}
        assert "--refresh" in opts and "--interval" not in opts


def test_every_dbos_verb_that_selects_by_filter_has_all_of_dbos_filters() -> None:
    """One declaration (``qctl.systems.dbos.cli.filters.FILTERS``): list and every bulk
    verb take the same filter options, and "application version" is one option name
    everywhere, whether it selects (list, cancel, ...) or names the version to run on (fork,
    rewind)."""
    dbos = get("dbos")
    verbs = _verbs(build("workflows", dbos.commands["workflows"]), "workflows")
    for verb in ("list", "cancel", "resume", "delete", "fork", "rewind", "set-delay"):
        assert set(verbs[f"workflows {verb}"]) >= FILTERS, verb
    for verb in ("fork", "rewind"):
        assert {"--application-version", "--app-version"} <= set(verbs[f"workflows {verb}"])
