"""What an agent's chat request resends, found once, before it is validated: for the validation
and the prompt count alike.

An agent resends its conversation and its tools every turn. The prompt count finds the messages
it has seen in one lookup (:mod:`mockoss.harmony.prompt.prefix`, the marshal bytes of the
leading messages) and keys the preamble by the tools' marshal bytes; the validation
(:func:`mockoss.schemas.chat.quick_validate`) went through every message and tool again. Here the
lookup is made once, before validation (:func:`find_seen`), and its answer (:class:`Seen`) is
handed to both: the validation validates only the messages after a prefix that an accepted
request held, and not the tools when an accepted request held the same tools; the count uses the
same prefix and the same tools bytes instead of looking again. On the agent turn of
``benchmarks/bench_prompt.py`` (50 messages, 48 seen, 20 tools), in process, same run:
validation + count 71 -> 44 us, ``MockServer.respond`` ~133 -> ~115 us.

A body parsed from a kept one (:mod:`mockoss.jsonsplice`) holds the very objects of the
earlier body it repeats: its prefix and its tools are then found by identity
(:meth:`~mockoss.harmony.prompt.prefix.PrefixCache.find`, :meth:`~mockoss.harmony.prompt.prefix.RecentKeys.find_object`),
without marshal; a tools list found by its bytes is recorded with its object, so that the next
turn finds it so.

Why skipping them is exact: equal marshal bytes mean equal JSON data (types and key order
included, see the prefix module), and whether a message or a tool is valid depends on its data
alone (no validator of the quick model reads two items or their positions). So a message equal
to one of a request the schema accepted is valid, and so is a tools list equal to an accepted
one. A prefix is marked validated (``Prefix.validated``) only through :func:`accept_seen`, which
the validation calls once it has accepted the whole body, and by the count when it stores a
prefix of such a body; the tools bytes are recorded by :func:`accept_seen` only. Anything the
quick path refuses is validated whole again by the model, so errors are unchanged.

The bytes are taken before validation and used by the count after it: the validation must leave
no reference to the body's objects behind (marshal flags an object referenced twice, so its
bytes would change, which costs a miss, never a wrong count): the quick request then holds the
body's own lists, not its validated copies.
"""

from __future__ import annotations

from typing import Any

from mockoss.harmony.prompt import count
from mockoss.harmony.prompt.pieces import _data_key
from mockoss.harmony.prompt.prefix import Seen

__all__ = ["Seen", "accept_seen", "find_seen"]


def find_seen(messages: Any, tools: Any) -> Seen:
    """The stored prefix of ``messages`` (``count.PREFIX_MIN`` of them or more) and the bytes of
    ``tools`` (a non-empty list), of one chat body. Call it while nothing but the body references
    them (see the module docstring)."""
    prefix = count._prefixes.find(messages) if isinstance(messages, list) and len(messages) >= count.PREFIX_MIN else None
    if not tools or not isinstance(tools, list):
        return Seen(prefix, None, False)
    found = count._valid_tools.find_object(tools)  # the very list an accepted body held (mockoss.jsonsplice)
    if found is not None:
        return Seen(prefix, found[0], True, False, found[1])
    key = _data_key(tools)
    if type(key) is not bytes:  # not plain data (a Mapping that is not a dict): the count keys it itself
        return Seen(prefix, None, False)
    found = count._valid_tools.find(key)
    if found is None:
        return Seen(prefix, key, False, tools=tools)
    if found[2] is not tools:
        count._valid_tools.carry(found, tools)  # found again by this very list next time
    return Seen(prefix, found[0], True, False, found[1])  # the stored bytes: their hash is kept


def accept_seen(seen: Seen) -> Seen:
    """``seen`` of a body the chat request schema accepted: its prefix (if any) marked validated,
    its tools' bytes (if any) recorded as validated (with their memo), and ``validated`` set."""
    if seen.prefix is not None and not seen.prefix.validated:
        count._prefixes.validate(seen.prefix)
    memo = seen.tools_memo
    if seen.tools_key is not None and not seen.tools_validated:
        memo = count._valid_tools.add(seen.tools_key, seen.tools)
    return Seen(seen.prefix, seen.tools_key, seen.tools_validated, True, memo)  # (a third of _replace's cost; tools no longer needed)
