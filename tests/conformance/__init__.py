"""One conformance suite, parametrized over both backends (tests/conftest.py)."""
