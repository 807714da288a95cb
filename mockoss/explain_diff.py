"""``mockoss explain``'s compact view: only where the profiles disagree, at most 100 columns.

:func:`render_compact` groups :class:`~mockoss.explain.Outcome` rows by what a client sent
(scenario rule and step, the step's answer, endpoint, tools variant). A group in which every
profile gave the same reply is left out and counted; a group in which they disagree prints a
header naming the rule and step it comes from, then one line per distinct reply listing the
profiles that gave it and only the fields that differ between the replies (status, items,
content, reasoning, calls, error). Profiles keep the order of the rows, so releases passed as
``--profile a,b,c`` stay in the order given. The full table is :func:`mockoss.explain.render_table`
(``mockoss explain --full``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

#: A :class:`mockoss.explain.Outcome` (not imported: explain imports this module).
Outcome = Any

__all__ = ["FIELDS", "WIDTH", "disagreements", "render_compact", "wrap_notes"]

#: Columns the compact view fits in.
WIDTH = 100
#: Fields compared between profiles, with the label each has in the compact view.
FIELDS = (
    ("status", "status"),
    ("items", "items"),
    ("content", "content"),
    ("reasoning", "reasoning"),
    ("tool_calls", "calls"),
    ("error", "error"),
)
_NAMES_COLUMN = 30


def _key(row: Outcome) -> tuple[Any, ...]:
    return (row.rule, row.step, row.answer, row.endpoint, row.tools, getattr(row, "request", None))


def _value(row: Outcome, field: str) -> str:
    value = getattr(row, field)
    if value is None:
        return "-"
    if field == "tool_calls":
        return "; ".join(f"{c['name']}({c['arguments']})" for c in value) if value else "none"
    if field == "items":
        return ",".join(map(str, value)) if value else "none"
    return str(value).replace("\n", "⏎") if value != "" else '""'


def _signature(row: Outcome) -> tuple[str, ...]:
    return tuple(_value(row, f) for f, _ in FIELDS)


def disagreements(rows: Sequence[Outcome]) -> tuple[list[tuple[tuple[Any, ...], list[tuple[list[str], Outcome]]]], int]:
    """Groups where profiles disagree and how many groups agree.

    Returns:
        ``([(group key, [(profile names, one row of that reply), …]), …], agreeing group count)``;
        a group key is ``(rule, step, answer, endpoint, tools, request)``. Rows with profile ``-``
        (a step no profile can surface, or a variant the rule's ``match`` never answers) form their
        own one-reply groups and are always listed.
    """
    groups: dict[tuple[Any, ...], list[Outcome]] = {}
    for row in rows:
        groups.setdefault(_key(row), []).append(row)
    out: list[tuple[tuple[Any, ...], list[tuple[list[str], Outcome]]]] = []
    agreeing = 0
    for key, members in groups.items():
        replies: dict[tuple[str, ...], tuple[list[str], Outcome]] = {}
        for row in members:
            replies.setdefault(_signature(row), ([], row))[0].append(row.profile)
        if len(replies) > 1 or members[0].profile == "-":
            out.append((key, list(replies.values())))
        else:
            agreeing += 1
    return out, agreeing


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _header(key: tuple[Any, ...]) -> str:
    rule, step, answer, endpoint, tools, request = key
    where = f"{rule} step {step}" if rule else f"step {step}"
    parts = [where] + ([answer] if answer and endpoint != "-" else []) + ([endpoint, tools] if endpoint != "-" else [])
    parts += [f"sent with {request}"] if request else []
    return _clip(" · ".join(parts), WIDTH)


def _fit(widths: list[int], room: int, floor: int = 6) -> list[int]:
    """Shrink the widest column, one character at a time, until the columns fit ``room``."""
    widths = list(widths)
    while sum(widths) > room and max(widths) > floor:
        widths[widths.index(max(widths))] -= 1
    return widths


def _group_table(replies: list[tuple[list[str], Outcome]], fields: list[tuple[str, str]]) -> list[str]:
    """Column labels, then one line per reply (profile names wrapped in their column), only
    ``fields``; at most :data:`WIDTH` columns."""
    header = ["profiles"] + [label for _, label in fields]
    body = [[", ".join(names)] + [_value(row, f) for f, _ in fields] for names, row in replies]
    natural = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    natural[0] = min(natural[0], _NAMES_COLUMN)
    gap = 2
    widths = [natural[0]] + _fit(natural[1:], WIDTH - 2 - natural[0] - gap * (len(header) - 1))
    lines = []
    for cells in [header, *body]:
        names = textwrap.wrap(cells[0], widths[0]) or [cells[0]]
        first = [names[0]] + [_clip(c, w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        for row in [first] + [[more] + [""] * len(fields) for more in names[1:]]:
            line = "  " + (" " * gap).join(c.ljust(w) for c, w in zip(row, widths, strict=True))
            lines.append(_clip(line.rstrip(), WIDTH))
    return lines


def render_compact(rows: Sequence[Outcome]) -> str:
    """The diff-only view (see the module docstring): every line at most :data:`WIDTH` columns."""
    groups, agreeing = disagreements(rows)
    profiles = list(dict.fromkeys(r.profile for r in rows if r.profile != "-"))
    lines: list[str] = []
    for key, replies in groups:
        lines.append(_header(key))
        if key[3] == "-":  # nothing a profile can surface (a template that needs a request)
            lines.append(_clip("  " + str(replies[0][1].answer or replies[0][1].error), WIDTH))
            continue
        if replies[0][1].profile == "-":  # a variant the rule's match never answers: not sent
            lines.extend(textwrap.wrap(str(replies[0][1].error), WIDTH, initial_indent="  ", subsequent_indent="    "))
            continue
        differing = [(f, label) for f, label in FIELDS if len({_value(r, f) for _, r in replies}) > 1]
        lines.extend(_group_table(replies, differing))
    total = agreeing + sum(1 for key, replies in groups if key[3] != "-" and replies[0][1].profile != "-")
    summary = (
        f"{agreeing} of {total} request variants (step × endpoint × tools) answered alike by all "
        f"{len(profiles)} profiles, not shown; --full prints every row"
    )
    if not any(key[3] != "-" and replies[0][1].profile != "-" for key, replies in groups) and profiles:
        summary = f"all {len(profiles)} profiles agree on all {total} request variants; --full prints every row"
    lines.extend(([""] if lines else []) + textwrap.wrap(summary, WIDTH))
    return "\n".join(lines)


def wrap_notes(text: str) -> str:
    """Wrap release-change notes to :data:`WIDTH` columns, continuation lines indented."""
    out: list[str] = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        out.extend(textwrap.wrap(line, WIDTH, initial_indent="", subsequent_indent=" " * (indent + 4)) or [""])
    return "\n".join(out)
