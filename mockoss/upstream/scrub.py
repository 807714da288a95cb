"""Secret-shaped strings, found and replaced before anything is written to a recording.

Always on (no flag turns it off): every recording is scrubbed, in mock, pass-through and raw mode,
with or without ``--redact`` (which adds personal details, :mod:`mockoss.upstream.redact`).

Detection uses `detect-secrets <https://github.com/Yelp/detect-secrets>`_ (Yelp, 1.x), a maintained
scanner whose provider patterns are kept up to date by its users: AWS access keys, GitHub, GitLab,
Slack, Stripe, SendGrid, Twilio, npm, PyPI, Discord, Telegram, Mailchimp, Azure storage keys, OpenAI
keys (``…T3BlbkFJ…``), JWTs (formally valid ones), private-key headers, ``user:password@`` in URLs,
``password = "…"``-style assignments, and two Shannon-entropy detectors. A few shapes it does not
know are added here as :data:`EXTRA_PATTERNS` (Anthropic, newer OpenAI and other ``sk-`` keys,
Google API and OAuth keys, Hugging Face and Groq tokens, ``Bearer`` tokens, whole PEM private keys).

Tuning of the entropy detectors (ordinary prose never reaches their limits; measured in
``tests/upstream/test_scrub.py``):

* base64-alphabet runs of at least :data:`MIN_ENTROPY_CHARS` characters with Shannon entropy above
  4.5 bits per character (detect-secrets' default limit). Words, paths and sentences stay below
  (``internationalization`` 2.95, ``/usr/local/lib/python3`` 3.79); a 40-character AWS secret access
  key is 4.6+. Random ids of 24+ characters (``call_…``) reach it too, which is why
* request fields that carry ids are not scanned: keys ``id`` and ``*_id`` (``tool_call_id``,
  ``previous_response_id``, ``call_id``), and ``data:`` URLs (inline images): replacing them would
  break the conversation a recording replays.
* hex runs of at least 32 characters above 3.0 bits (detect-secrets' default), UUIDs excepted.
  Known false positive: commit ids and digests written in a prompt are replaced too.

Where the scan runs: the whole request (every string value but the id fields above) and the
prompt shown in ``note``/``match`` get every detector; each value found is then replaced *wherever
it appears* in the written step, replay bytes and completions included (an upstream that echoes
``instructions`` or ``metadata`` echoes the value found in the request). The upstream's own output
gets the provider patterns only (not entropy: its ids are random by design; not the
assignment-context detectors: they cost ~1 ms per KB). Known gap: a secret
a model streams token by token in pass-through mode is split across delta frames and no frame
holds it whole; it is not replaced (nor does the file hold it as one string). A replay body
that is not UTF-8 (stored as ``body_base64``) is not scanned.

Placeholders are ``[REDACTED:<kind>:<n>]`` (``n`` counts distinct values in one recording, in the
order written): the same value gets the same placeholder throughout a recording, and the same
traffic gives the same recording. They hold no ``"``, ``\\`` or newline, so JSON bodies and SSE
frames stay well-formed.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

from mockoss.harmony.lru import BytesLRU

__all__ = ["EXTRA_PATTERNS", "MIN_ENTROPY_CHARS", "Scrubber", "find_secrets"]

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
    ("aws-secret-key", re.compile(r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*['\"]?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])")),
)
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
_KIND = re.compile(r"[^a-z0-9]+")
#: detect-secrets plugins that look for an assignment context (``password = "…"``) rather than a
#: provider's key shape; the slowest by far (KeywordDetector: ~1 ms per KB), so an upstream's own
#: output (long streams) is not scanned with them. Request text always is.
_CONTEXT_PLUGINS = frozenset(
    {"KeywordDetector", "IbmCloudIamDetector", "CloudantDetector", "IbmCosHmacDetector", "SoftlayerDetector"}
)
#: Request keys whose values are ids, not secrets (see the module docstring).
_ID_KEY = re.compile(r"(?:^|_)id$")


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


def _spans(text: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    start = text.find(value)
    while start >= 0:
        yield start, start + len(value), kind
        start = text.find(value, start + len(value))


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


#: Byte budget of the scans kept by text (:func:`find_secrets`). An ``lru_cache(4096)`` keyed by
#: whole request and reply texts held up to 4,096 bodies of any size (issue 9 review: caches of
#: request data bounded in bytes); ``MockServer.reset`` empties it.
SCAN_CACHE_BYTES = 16 * 1024 * 1024
_scans: BytesLRU[tuple[tuple[int, int, str], ...]] = BytesLRU(SCAN_CACHE_BYTES)


def _cached(text: str, entropy: bool) -> tuple[tuple[int, int, str], ...]:
    key = (text, entropy)
    found = _scans.get(key)
    if found is None:
        found = tuple(_find(text, entropy))
        _scans.put(key, found, sys.getsizeof(text) + 128 * len(found))
    return found


def find_secrets(text: str, *, entropy: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret-shaped value in ``text``, in order, none overlapping
    (the longer of two overlapping finds wins).

    Args:
        text: any text (multi-line; PEM blocks are found whole).
        entropy: also run the entropy and assignment-context detectors (off for an upstream's own
            output: its ids are random by design, and its streams are long).

    Results are cached per text (a conversation resends its earlier messages every turn).
    """
    return list(_cached(text, entropy))


def _find(text: str, entropy: bool) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for kind, pattern in EXTRA_PATTERNS:
        for match in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            found.append((match.start(group), match.end(group), kind))
    # The whole text at once: detect-secrets' patterns do not cross line ends, and one pass
    # costs far less than one per line (25 plugins each).
    if len(text) >= 8:
        for value, kind in _detected(text, entropy):
            found.extend(_spans(text, value, kind))
    return _non_overlapping(found)


def _strings(data: Any, key: str = "") -> Iterator[str]:
    """Every string value in a JSON document, except id fields and ``data:`` URLs."""
    if isinstance(data, str):
        if not _ID_KEY.search(key) and not data.startswith("data:"):
            yield data
    elif isinstance(data, dict):
        for name, value in data.items():
            yield from _strings(value, str(name))
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value, key)


class Scrubber:
    """Replaces secrets with stable placeholders for one recording (thread-safe).

    The placeholder of a value is fixed the first time it is seen: ``[REDACTED:<kind>:<n>]``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._placeholders: dict[str, str] = {}

    def placeholder(self, value: str, kind: str) -> str:
        """The stand-in for ``value`` (same value, same stand-in)."""
        with self._lock:
            found = self._placeholders.get(value)
            if found is None:
                found = self._placeholders[value] = f"[REDACTED:{kind}:{len(self._placeholders) + 1}]"
            return found

    def spans(self, text: str, known: dict[str, str] | None = None) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` spans of :func:`find_secrets` in ``text`` plus every
        occurrence of a ``known`` value (value → kind), none overlapping."""
        return _non_overlapping(find_secrets(text) + _known_spans(text, known or {}))

    def request_secrets(self, body: Any) -> dict[str, str]:
        """value → kind of every secret in a request body (every detector, id fields skipped)."""
        out: dict[str, str] = {}
        for text in _strings(body):
            for start, end, kind in find_secrets(text):
                out.setdefault(text[start:end], kind)
        return out

    def replace_all(self, texts: list[str], known: dict[str, str]) -> list[str]:
        """:meth:`replace` on each of ``texts`` (stream frames) with one scan of them all: each
        secret the provider patterns find in any of them is replaced wherever it appears."""
        joined = "\n".join(texts)
        found = dict(known)
        for start, end, kind in find_secrets(joined, entropy=False):
            found.setdefault(joined[start:end], kind)
        return [self._substitute(text, _known_spans(text, found)) for text in texts]

    def replace(self, text: str, known: dict[str, str], *, entropy: bool = False) -> str:
        """``text`` with every ``known`` value and every provider-pattern secret replaced
        (``entropy``: the entropy and assignment-context detectors too)."""
        return self._substitute(text, find_secrets(text, entropy=entropy) + _known_spans(text, known))

    def _substitute(self, text: str, spans: list[tuple[int, int, str]]) -> str:
        if not spans:
            return text
        out, position = [], 0
        for start, end, kind in _non_overlapping(spans):
            out += [text[position:start], self.placeholder(text[start:end], kind)]
            position = end
        out.append(text[position:])
        return "".join(out)


def _known_spans(text: str, known: dict[str, str]) -> list[tuple[int, int, str]]:
    """Every occurrence of every ``known`` value (value → kind) in ``text``."""
    return [span for value, kind in known.items() for span in _spans(text, value, kind)]


def _non_overlapping(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` in order, an overlapping one dropped (of two starting together, the longer stays)."""
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda span: (span[0], -(span[1] - span[0]))):
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept
