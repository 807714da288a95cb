"""``--switch NAME=VALUE[,NAME=VALUE…]``: parsing and the refusal of a switch given twice.

Shared by ``mockoss serve`` (:mod:`mockoss.cli_parser`) and ``mockoss explain``
(:mod:`mockoss.explain`); moved out of :mod:`mockoss.cli_parser` (2ef5e12) so that explain can
use it without an import circle (cli_parser imports explain to add its arguments). The words of
the refusal are those of the ``X-Mockoss-Switch`` header (:func:`mockoss.server.replies._parse_switches`).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["Switches", "given_twice", "switch_pairs"]


def switch_pairs(text: str) -> list[tuple[str, Any]]:
    """``NAME=VALUE[,NAME=VALUE…]``, the list the ``X-Mockoss-Switch`` header takes, each value
    plain YAML as the header reads it (:func:`mockoss.scenario.yamlsafe.load_plain`: no tags,
    aliases bounded); a value that is not is a usage error, not a traceback (issue 9 review,
    eighth session, finding 8). A name given twice is refused as the header refuses it
    (:func:`mockoss.server.replies._parse_switches`; :class:`Switches` for two flags)."""
    import yaml

    from mockoss.scenario.yamlsafe import YamlLimitError, load_plain

    pairs: list[tuple[str, Any]] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE…], got {item!r} in {text!r}")
        if any(name.strip() == seen for seen, _ in pairs):
            raise argparse.ArgumentTypeError(given_twice(name.strip()))
        try:
            pairs.append((name.strip(), load_plain(value)))
        except (yaml.YAMLError, YamlLimitError) as exc:  # load_plain turns a RecursionError into YamlLimitError
            raise argparse.ArgumentTypeError(
                f"{name.strip()}: not a plain YAML value: {exc}".replace("\n", " ")
            ) from None
    if not pairs:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE…], got {text!r}")
    return pairs


def given_twice(name: str) -> str:
    """The words ``X-Mockoss-Switch`` answers a repeated switch with (a 400:
    :func:`mockoss.server.replies._parse_switches`), after its header name."""
    return f"switch {name!r} is given more than once; give each switch once"


class Switches(argparse.Action):
    """``--switch``'s action: the pairs of every ``--switch`` flag in one list, a switch named by
    two flags refused (exit 2) as one flag's list and the header refuse it. Until the eighteenth
    session two flags (``--switch strict=true --switch strict=false``) started the server with the
    last value, where the header gives a 400 and the README says each switch once (the eighteenth
    session's breaker, item 7)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        pairs = list(getattr(namespace, self.dest, None) or [])
        for name, value in values:
            if any(name == seen for seen, _ in pairs):
                raise argparse.ArgumentError(self, given_twice(name))
            pairs.append((name, value))
        setattr(namespace, self.dest, pairs)
