"""A drawn dependency graph (``qctl.core.graph``) as Rich text for the dashboard: each
node's label in its style, the selected one reversed. azync's DAG runs and hopper's
workflows show it."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from qctl.core.graph import Rendering


def styled(rendering: Rendering, styles: Mapping[str, str], selected: str = "") -> Text:
    """``rendering``'s lines, node ``key``'s label styled ``styles[key]``."""
    text = Text()
    for i, line in enumerate(rendering.lines):
        row = Text(line)
        for key, box in rendering.boxes.items():
            if box.line == i:
                style = styles.get(key, "")
                if key == selected:
                    style = f"{style} reverse".strip()
                row.stylize(style, box.x, box.x + box.width)
        text.append_text(row)
        text.append("\n")
    return text
