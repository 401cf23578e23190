"""The root options' places on a command line, read without Typer: ``launch`` parses
the dashboard's line with them, and the root command rearranges every other line."""

from __future__ import annotations

from collections.abc import Sequence

ROOT_OPTIONS = (
    "--dsn",
    "--schema",
    "--context",
    "--system",
    "--statement-timeout",
    "--lock-timeout",
)
"""Root options that take a value: accepted anywhere on the line (kubectl-style)."""
ROOT_FLAGS = ("--read-only", "--no-color", "--wide")
OUTPUT_OPTIONS = ("-o", "--output")
"""The verbs' output option: accepted before the command too."""
KEEPS_ROOT_OPTIONS = ("context",)
"""Groups whose verbs take options named like the root's (``context add --dsn``)."""


def undecodable(arg: str) -> bool:
    """Python hands bytes that are not UTF-8 over as lone surrogates."""
    return any("\udc80" <= ch <= "\udcff" for ch in arg)


def _option_at(args: Sequence[str], i: int, names: Sequence[str], flags: Sequence[str] = ()) -> int:
    """How many tokens from ``args[i]`` form one of the options ``names`` (with a value:
    ``--dsn X``, ``--dsn=X``, ``-oX``) or ``flags``; 0 when it is none of them."""
    arg = args[i]
    if arg in flags:
        return 1
    if arg in names:  # without its value: see ``arrange``
        return 2 if i + 1 < len(args) else 0
    return int(
        any(
            arg.startswith(f"{n}=") or (len(n) == 2 and arg.startswith(n) and len(arg) > 2)
            for n in names
        )
    )


def arrange(argv: Sequence[str]) -> list[str]:
    """The command line with the root options moved before the command and ``-o`` after
    it, so that both may be given anywhere, as kubectl takes them: ``qctl jobs list --dsn
    D -o json`` means ``qctl --dsn D jobs list -o json``. Nothing after ``--`` moves, and
    in ``KEEPS_ROOT_OPTIONS`` groups only what precedes the group is a root option.

    A root option that ends the line without its value is a usage error in its own name
    (``--dsn needs a value``), not the verb's "no such option"."""
    root, rest = _parts(argv)
    return [*root, *rest]


def completing(argv: Sequence[str]) -> list[str]:
    """``arrange`` for shell completion of the word after ``argv``: a root option that
    ends them waits for that word, its value, which the root command completes (the
    root options before it kept, the command's words left out)."""
    if argv and argv[-1] in ROOT_OPTIONS:
        from typer._click.exceptions import UsageError

        try:
            arrange(argv)
        except UsageError:
            return [*_parts(argv[:-1])[0], argv[-1]]
    return arrange(argv)


def _parts(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``arrange``'s line in two: the root options, then the rest."""
    args = list(argv)
    tail: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, tail = args[:cut], args[cut:]
    root: list[str] = []
    output: list[str] = []
    rest: list[str] = []
    group = ""
    i = 0
    while i < len(args):
        n = 0 if group in KEEPS_ROOT_OPTIONS else _option_at(args, i, ROOT_OPTIONS, ROOT_FLAGS)
        if not n and group not in KEEPS_ROOT_OPTIONS and args[i] in ROOT_OPTIONS:
            from typer._click.exceptions import UsageError

            raise UsageError(f"{args[i]} needs a value")
        m = 0 if n else _option_at(args, i, OUTPUT_OPTIONS)
        if not (n or m or group or args[i].startswith("-")):
            group = args[i]
        (root if n else output if m else rest).extend(args[i : i + (n or m or 1)])
        i += n or m or 1
    return root, [*rest, *output, *tail]
