"""What counts as a secret in a recording: detect-secrets' plugins plus a few shapes of our own.

Detection uses `detect-secrets <https://github.com/Yelp/detect-secrets>`_ (Yelp, 1.x), a maintained
scanner whose provider patterns are kept up to date by its users: AWS access keys, GitHub, GitLab,
Slack, Stripe, SendGrid, Twilio, npm, PyPI, Discord, Telegram, Mailchimp, Azure storage keys, OpenAI
keys (``…T3BlbkFJ…``), JWTs (formally valid ones), private-key headers, ``user:password@`` in URLs,
``password = "…"``-style assignments, and two Shannon-entropy detectors. A few shapes it does not
know are added here as :data:`EXTRA_PATTERNS` (Anthropic, newer OpenAI and other ``sk-`` keys,
Google API and OAuth keys, Hugging Face and Groq tokens, ``Bearer`` tokens, whole PEM private keys).

Tuning of the entropy detectors (ordinary prose never reaches their limits; measured in
``tests/upstream/test_record_secrets.py``):

* base64-alphabet runs of at least :data:`MIN_ENTROPY_CHARS` characters with Shannon entropy above
  4.5 bits per character (detect-secrets' default limit). Words, paths and sentences stay below
  (``internationalization`` 2.95, ``/usr/local/lib/python3`` 3.79); a 40-character AWS secret access
  key is 4.6+. Random ids of 24+ characters (``call_…``) reach it too, which is why
  :mod:`mockoss.upstream.scrub` does not scan the request fields that carry ids.
* hex runs of at least 32 characters above 3.0 bits (detect-secrets' default), UUIDs excepted.
  Known false positive: commit ids and digests written in a prompt are replaced too.

:func:`find_spans` is the whole scan of one text, here and in the scan worker process;
:mod:`mockoss.upstream.scrub` caches it, sends big texts to the worker and replaces what it finds.
Split from ``scrub.py`` (which had reached 400 lines) as its one job: which strings are secrets.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from mockoss.upstream.occurrences import occurrences

__all__ = [
    "BASE64_LIMIT",
    "EXTRA_PATTERNS",
    "HEX_LIMIT",
    "MIN_ENTROPY_CHARS",
    "MIN_HEX_CHARS",
    "find_spans",
    "non_overlapping",
]

#: Shortest base64/hex run the entropy detectors consider.
MIN_ENTROPY_CHARS = 20
MIN_HEX_CHARS = 32
BASE64_LIMIT = 4.5
HEX_LIMIT = 3.0

#: Provider shapes detect-secrets 1.5 has no plugin for: (kind, pattern; group 1 if any is the secret).
EXTRA_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("json-web-token", re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")),
    ("private-key", re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("api-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("groq-key", re.compile(r"\bgsk_[A-Za-z0-9]{40,}")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{12,})")),
    (
        "aws-secret-key",
        re.compile(r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*['\"]?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    ),
)
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
_KIND = re.compile(r"[^a-z0-9]+")
#: detect-secrets plugins that look for an assignment context (``password = "…"``) rather than a
#: provider's key shape; the slowest by far (KeywordDetector: ~1 ms per KB), so an upstream's own
#: output (long streams) is not scanned with them. Request text always is.
_CONTEXT_PLUGINS = frozenset(
    {"KeywordDetector", "IbmCloudIamDetector", "CloudantDetector", "IbmCosHmacDetector", "SoftlayerDetector"}
)


@functools.cache
def _plugins() -> tuple[list[Any], list[Any]]:
    """detect-secrets' plugins: (pattern plugins, entropy plugins). Public IPs are not secrets."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.ip_public import IPPublicDetector

    patterns, entropy = [], []
    for cls in get_mapping_from_secret_type_to_class().values():
        if cls is IPPublicDetector:
            continue
        if issubclass(cls, HighEntropyStringsPlugin):
            entropy.append(cls())
        else:
            patterns.append(cls())
    return patterns, entropy


def _kind(name: str) -> str:
    return _KIND.sub("-", name.lower()).strip("-")


def _detected(text: str, entropy: bool) -> Iterator[tuple[str, str]]:
    """(value, kind) of every secret detect-secrets finds in ``text``."""
    patterns, entropies = _plugins()
    for plugin in patterns:
        if not entropy and type(plugin).__name__ in _CONTEXT_PLUGINS:
            continue
        try:
            found = plugin.analyze_line(filename="mockoss-recording", line=text, line_number=0)
        except Exception:  # noqa: BLE001, S112  # a plugin bug must not stop the recording: the others still run
            continue
        for secret in found or ():
            if secret.secret_value and secret.secret_value.strip():
                yield secret.secret_value, _kind(plugin.secret_type)
    if not entropy:
        return
    for plugin in entropies:
        hex_only = "Hex" in type(plugin).__name__
        # The plugin's alphabet, unquoted (detect-secrets' own non_quoted_string_regex() swaps the
        # plugin's regex in place, which is not safe with several recorders' threads).
        for value in _runs(plugin.charset).findall(text):
            if len(value) < (MIN_HEX_CHARS if hex_only else MIN_ENTROPY_CHARS) or _UUID.fullmatch(value.strip("-")):
                continue
            if plugin.calculate_shannon_entropy(value) > (HEX_LIMIT if hex_only else BASE64_LIMIT):
                yield value, "high-entropy-string"


@functools.cache
def _runs(charset: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(charset)}]+")


def find_spans(text: str, entropy: bool) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret-shaped value in ``text``, in order, none overlapping:
    :data:`EXTRA_PATTERNS` and detect-secrets' plugins (with ``entropy``, the entropy and
    assignment-context ones too), each value found located wherever it occurs. Uncached and in
    this process: :func:`mockoss.upstream.scrub.find_secrets` is the cached entry point."""
    found: list[tuple[int, int, str]] = []
    for kind, pattern in EXTRA_PATTERNS:
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            found.append((match.start(group), match.end(group), kind))
    # The whole text at once: detect-secrets' patterns do not cross line ends, and one pass
    # costs far less than one per line (25 plugins each).
    if len(text) >= 8:
        values: dict[str, str] = {}
        for value, kind in _detected(text, entropy):
            values.setdefault(value, kind)  # a value two plugins find keeps the first one's kind
        found += occurrences(text, values)
    return non_overlapping(found)


def non_overlapping(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` in order, an overlapping one dropped (of two starting together, the longer stays)."""
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda span: (span[0], -(span[1] - span[0]))):
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept
