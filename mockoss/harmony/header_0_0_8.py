"""Header parsing the way openai-harmony 0.0.8 did it (one job: a decoded header → its fields).

Split from :mod:`mockoss.harmony.library` (whose docstring says how 0.0.8 and oss-harmony differ:
a header holding ``<|channel|>`` twice). Pure Python, no parser state: the emulation
(:mod:`mockoss.harmony.emulate_0_0_8`) calls it on the headers where the two libraries disagree.
"""

from __future__ import annotations

import dataclasses
import re

from openai_harmony import Role

__all__ = ["Header", "HeaderError", "parse_header_0_0_8", "rust_debug"]

_CHANNEL_TEXT, _CONSTRAIN_TEXT = "<|channel|>", "<|constrain|>"
_ASCII_WHITESPACE = re.compile(r"[ \t\n\x0c\r]+")
_ROLES = {role.value: role for role in Role}


class HeaderError(ValueError):
    """openai-harmony 0.0.8 would raise ``HarmonyError`` with this text for the header."""


@dataclasses.dataclass(frozen=True, slots=True)
class Header:
    """A parsed header: author role and name, recipient, channel, content type; ``remaining`` text."""

    role: Role
    name: str | None
    recipient: str | None
    channel: str | None
    content_type: str | None
    remaining: str | None


def rust_debug(text: str) -> str:
    """``format!("{:?}", Some(text))`` for the characters a header can hold."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'Some("{escaped}")'


def parse_header_0_0_8(header: str, role: Role | None, *, recipient_and_type: bool = True) -> Header:
    """Parse a decoded header the way openai-harmony 0.0.8 does.

    Behaviour of openai/harmony@ec7606d:src/encoding.rs ``StreamableParser::parse_header_from_string``
    (re-implemented, not copied): the first ``<|channel|>NAME`` gives the channel and is cut out;
    ``<|constrain|>`` gets a space before it; the rest splits on ASCII whitespace into
    ``[role] [to=]recipient [content type]``; an unknown first word followed by more words (or
    starting with ``to=``) makes a ``tool`` author of that name. ``role`` is the role the parser
    already knows (the first message of a completion), else ``None``.

    Raises:
        HeaderError: with 0.0.8's message, e.g. ``Unknown role: assistant<|channel|>final`` or
            ``channel marker present but no channel value found in header``.
    """
    channel = None
    index = header.find(_CHANNEL_TEXT)
    if index >= 0:
        after = header[index + len(_CHANNEL_TEXT) :]
        end = next((i for i, c in enumerate(after) if c.isspace() or c == "<"), len(after))
        if end == 0:
            raise HeaderError("channel marker present but no channel value found in header")
        channel = after[:end]
        header = header[:index] + after[end:]
    header = header.strip()
    if _CONSTRAIN_TEXT in header:
        header = header.replace(_CONSTRAIN_TEXT, " " + _CONSTRAIN_TEXT).strip()
    parts = [p for p in _ASCII_WHITESPACE.split(header) if p]
    role_text = None
    if role is None:
        if not parts:
            raise HeaderError("message header did not contain a role")
        role_text = parts[0]
        role = _ROLES.get(role_text)
        if role is None:
            if len(parts) > 1 or parts[0].startswith("to="):
                parts.pop(0)
                role = Role.TOOL
            else:
                raise HeaderError(f"Unknown role: {role_text}")
    if parts and parts[0] == role.value:
        parts.pop(0)
    recipient = content_type = None
    if recipient_and_type and parts:
        count, last = len(parts), parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif count == 1:
            recipient = last
        else:
            content_type = last
            if parts:
                raw = parts.pop()
                recipient = raw.removeprefix("to=")
    remaining = " ".join(parts) if parts else None
    name = role_text if role == Role.TOOL else None
    return Header(role, name, recipient, channel, content_type, remaining)
