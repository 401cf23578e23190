"""qctl: the operator console (command line and dashboard) for azync job stores."""

from __future__ import annotations

__version__ = "0.1.0"
