"""The repository reads on its own: no comment, docstring or message cites a document
that is not in it (the contract notes, their parts and sections, the seeds, the team's
shared folder). State the rule itself, or name the upstream file it comes from (azync's
``driver/azyncpgx/<file>.go``, DBOS's ``dbos/_sys_db.py``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("qctl", "qctl_store", "tests", "bench", "scripts")
SUFFIXES = {".py", ".sql", ".tcss", ".sh", ".md", ".toml", ".txt", ".cfg"}

CITATION = re.compile(
    r"\bnotes?\s+(?:Part\s+)?\d"
    r"|\bnotes?\s+Part\b"
    r"|\bPart\s+\d+\b"
    r"|\bseeds?\s+`?0\d\d"
    r"|shared/(?:reference|seeds)"
    r"|contract-notes"
    r"|DESIGN\.md"
)
"""Citation forms; matched on text whose line breaks (and comment markers) are joined,
so a citation wrapped across two lines is found too."""

_JOIN = re.compile(r"[ \t]*\n[ \t]*(?:#+|--|//|\*)?[ \t]*")


def _files() -> list[Path]:
    return [
        path
        for top in SCANNED
        for path in sorted((ROOT / top).rglob("*"))
        if path.suffix in SUFFIXES
        and path.is_file()
        and not any(part.startswith(".") or part == "__pycache__" for part in path.parts)
    ]


def citations(text: str) -> list[str]:
    return [m.group(0) for m in CITATION.finditer(_JOIN.sub(" ", text))]


def test_the_pattern_finds_each_form() -> None:
    # Each example is split in two, so that this file itself cites nothing for a plain
    # text search (the scan below skips it anyway).
    for head, tail in (
        ("(notes", " 1.A Admin/ListJobs)"),
        ("see the notes Part", "\n# 2.10 for why"),
        ("-- (notes", " Part 0)"),
        ("seed", " 000 lists it"),
        ("seed", " `004_1b3d.txt`"),
        ("shared/", "reference/x.md"),
        ("as DESIGN", ".md says"),
    ):
        text = head + tail
        assert citations(text), text
    for text in ("azync's driver/azyncpgx/store_admin.go", "a note: 2 rows", "part 3 of 4"):
        assert not citations(text), text


def test_no_file_cites_a_document_outside_the_repository() -> None:
    me = Path(__file__).resolve()
    files = _files()
    assert len(files) > 100, "the scan found too few files: its file list is wrong"
    found = [
        f"{path.relative_to(ROOT)}: {hit!r}"
        for path in files
        if path != me
        for hit in citations(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, "citations of documents not in the repository:\n" + "\n".join(found)
