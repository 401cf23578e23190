"""The package's public surface: what ``from qctl_store import *`` gives a user."""

from __future__ import annotations


def test_star_import_exports_the_contract_types_and_open_store() -> None:
    namespace: dict[str, object] = {}
    exec("from qctl_store import *", namespace)
    for name in ("open_store", "Config", "NotFound", "InvalidInput", "EnqueueParams", "Job"):
        assert name in namespace, name
    for name in ("Source", "JobState", "DAGParams", "Change", "KIND_SLEEP"):
        assert name in namespace, name
    assert "Any" not in namespace and "dataclass" not in namespace
