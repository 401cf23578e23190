"""Start-up without the cyclic garbage collector.

Starting qctl makes tens of thousands of objects that live as long as the process
(modules, classes, Textual's styles and widgets) and next to no cyclic garbage, yet the
collector walks them again and again while they are being made: about 15% of the time
``qctl top`` takes to its first frame. The console script pauses the collector before
its imports (``pause``); it resumes (``resume``) once the process is up: after a
dashboard's first frame, or for any other command line once its command tree is imported.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """The collector back on, with the start-up's objects frozen (moved where it never
    walks them again). Does nothing unless ``pause`` turned it off: a process that
    never paused (a test's) keeps its collector as it had it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
