"""Both backends are laid out alike: each method of the contract is implemented in the
same-named module of ``qctl_store/postgres`` and ``qctl_store/sqlite`` (``events.py``,
``maintenance.py``, ...), so a change to one backend shows where it goes in the other."""

from __future__ import annotations

import inspect

from qctl_store import contract
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore


def _contract_methods() -> set[str]:
    names: set[str] = set()
    for _, cls in inspect.getmembers(contract, inspect.isclass):
        if cls.__module__ == contract.__name__ and issubclass(PostgresStore, cls):
            names |= {n for n, f in vars(cls).items() if callable(f) and not n.startswith("_")}
    return names


def _module_of(store: type, name: str) -> str:
    """The backend module defining ``name`` (``events``), or the shared one it inherits."""
    module = getattr(store, name).__module__
    return module.rsplit(".", 1)[-1] if module.startswith(store.__module__) else module


def test_every_contract_method_sits_in_the_same_named_module_on_both_backends() -> None:
    names = _contract_methods()
    assert {"enqueue", "get_event", "vacuum_dead", "nuke_all", "ops_stats"} <= names
    where = {
        name: (_module_of(PostgresStore, name), _module_of(SqliteStore, name)) for name in names
    }
    # A backend may keep the contract's own default (SQLite has no index tuning to do).
    apart = {
        name: pair
        for name, pair in sorted(where.items())
        if pair[0] != pair[1] and contract.__name__ not in pair
    }
    assert not apart, f"methods in different modules per backend (postgres, sqlite): {apart}"
