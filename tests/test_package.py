"""The packages' public surface: what ``from qctl_store import *`` gives a user, and the
toolkit's errors every system raises (``qctl_kit.errors``)."""

from __future__ import annotations


def test_star_import_exports_the_contract_types_and_open_store() -> None:
    namespace: dict[str, object] = {}
    exec("from qctl_store import *", namespace)
    for name in ("open_store", "Config", "EnqueueParams", "Job"):
        assert name in namespace, name
    for name in ("Source", "JobState", "DAGParams", "Change", "KIND_SLEEP"):
        assert name in namespace, name
    assert "Any" not in namespace and "dataclass" not in namespace
    # The errors are the toolkit's, imported from there only (no second name for them).
    assert "NotFound" not in namespace and "InvalidInput" not in namespace
    from qctl_kit import errors

    assert issubclass(errors.NotFound, errors.StoreError)
    assert issubclass(errors.InvalidInput, ValueError)


def test_contract_types_compare_and_print_as_generated_dataclasses() -> None:
    """The types share one ``__eq__`` and ``__repr__`` (``qctl_store.types._Record``):
    they must behave as the ones ``@dataclass`` generates."""
    import copy
    import dataclasses
    import uuid

    from qctl_store import types

    task = types.DAGTask(key="wait", kind=types.KIND_SLEEP, payload={"a": [1, 2]})
    values = [
        types.EnqueueParams(kind="k", id=uuid.UUID(int=7), meta={"m": "v"}),
        task,
        types.DAGParams(name="d", tasks=[task], deps=[types.DAGDep("b", depends_on_key="wait")]),
    ]
    for value in values:
        names = [f.name for f in dataclasses.fields(value)]
        twin_cls = dataclasses.make_dataclass(type(value).__qualname__, names)
        twin = twin_cls(**{n: getattr(value, n) for n in names})
        assert repr(value) == repr(twin)
        assert value == copy.deepcopy(value)
        changed = dataclasses.replace(value, **{names[0]: "other"})
        assert value != changed
        assert value != twin  # another class, even with equal fields
        try:
            hash(value)
        except TypeError:
            pass
        else:
            raise AssertionError(f"{type(value).__name__} is hashable")
    classes = [v for v in vars(types).values() if dataclasses.is_dataclass(v)]
    assert len(classes) == 36 and all(issubclass(c, types._Record) for c in classes)
    # The shared methods compare and print every field: a field(compare=False) or
    # field(repr=False) would need them extended first.
    for cls in classes:
        for f in dataclasses.fields(cls):
            assert f.compare and f.repr, f"{cls.__name__}.{f.name}"


def test_not_found_names_the_operation_and_no_system() -> None:
    """Every system's front end shows it as it is: no "azync:" of one system, no "job" for
    a DAG (the front ends used to strip and reword azync's Go wording)."""
    from qctl.core.exits import ExitCode, exit_code_for, message_for
    from qctl_kit.errors import NotFound

    exc = NotFound("get dag", "no dag 0193")
    assert str(exc) == "get dag: not found, or not in a state that allows it (no dag 0193)"
    assert (exc.op, message_for(exc), exit_code_for(exc)) == (
        "get dag",
        str(exc),
        ExitCode.NOT_FOUND,
    )
