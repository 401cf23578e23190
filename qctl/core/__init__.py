"""The toolkit every system and both front-ends share: refusals and error tests
(``errors``), parsers for what operators type (``parse``), terminal-safe text
(``sanitize``) and where qctl keeps its own files (``paths``).

It imports no system, no front-end (typer, textual) and nothing heavy, so any layer may
import it; ``tests/test_layers.py`` checks that.
"""
