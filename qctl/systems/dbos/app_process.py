"""The DBOS application of ``qctl demo --system dbos`` (``demo_app.py``) in a subprocess,
shared by the demo command and the DBOS tests."""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
from pathlib import Path

APP = Path(__file__).with_name("demo_app.py")


class AppProcess:
    """``demo_app.py`` on ``url``, started and past its ``ready`` line.

    Its output is drained by a thread for as long as it runs (the last lines are kept in
    ``tail``): an application whose pipe nobody reads blocks in its next log call once
    the pipe is full, and its queue workers stop dequeuing.
    """

    def __init__(self, url: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(APP), url, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.tail: collections.deque[str] = collections.deque(maxlen=200)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == "ready":
                break
            self.tail.append(line)
        else:
            raise RuntimeError(
                f"the DBOS application did not start (exit {self.proc.wait()}): "
                + "".join(self.tail)[-500:]
            )
        threading.Thread(target=self._drain, name="dbos-app-output", daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.tail.append(line)

    def stop(self, timeout: float = 20.0) -> None:
        """Close its stdin (it stops), killing it after ``timeout`` seconds."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
