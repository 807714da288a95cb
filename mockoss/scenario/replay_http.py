"""What a ``replay:`` step's status and headers must be for HTTP/1.1 to carry them.

A ``replay:`` step (:mod:`mockoss.scenario.replay`) is written by uvicorn, through httptools when
installed and h11 otherwise. Either refuses some headers only when the reply is sent: the
connection then drops with nothing sent, or the client gets an unscripted 500 or a truncated body
(breaker report, session 12, finding 5). These checks refuse them when the scenario loads (and in
``mockoss validate``), as ``FILE:LINE: steps[0].replay.headers.NAME: …``:

- a header name must be an HTTP token (RFC 9110 §5.6.2; h11 0.16.0 ``h11/_abnf.py`` ``token``,
  which uvicorn's httptools writer's ``HEADER_RE`` is a looser form of);
- a header value or ``content_type`` must be Latin-1 text (Starlette and mockoss's fast path
  encode header values as Latin-1; anything else is a ``UnicodeEncodeError`` and a 500), with no
  control character but tab (uvicorn 0.55.0 ``uvicorn/protocols/http/httptools_impl.py``
  ``HEADER_VALUE_RE``; h11 ``_abnf.py`` ``field_value`` refuses CR, LF, NUL, vertical tab and form
  feed) and no space or tab at either end (h11 ``field_content`` starts and ends with a visible
  character);
- ``Content-Length`` and ``Transfer-Encoding`` are refused: mockoss frames the body itself (a
  ``Content-Length`` for a JSON body, chunked transfer encoding for a stream), and a second framing
  header is a truncated body or an h11 ``LocalProtocolError``;
- a header named twice (names compare case-insensitively) is refused: only one would be sent;
- the status is 200-599 (schema bound): a 1xx is an interim response, never the final one
  (RFC 9110 §15.2; h11 sends it as an ``InformationalResponse`` and fails on the body; 101
  switches protocols). A 204 or 304 has no body (RFC 9110 §6.4.1; uvicorn and h11 frame it with
  none and fail on the first body byte), so its body must be empty.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["BODYLESS_STATUSES", "FRAMING_HEADERS", "HeaderName", "HeaderValue", "check_header_value", "check_headers"]

#: Statuses whose reply has no body (RFC 9110 §6.4.1; uvicorn and h11 send none).
BODYLESS_STATUSES = (204, 304)

#: Headers that frame the body, written by mockoss itself (lower-case).
FRAMING_HEADERS = ("content-length", "transfer-encoding")

_TOKEN = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def check_header_name(name: str) -> str:
    """``name`` unchanged if HTTP can send it as a replayed header (module docstring).

    Raises:
        ValueError: not an HTTP token, or a framing header (``Content-Length``, ``Transfer-Encoding``).
    """
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"header name {name!r} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)")
    if name.lower() in FRAMING_HEADERS:
        raise ValueError(
            f"header {name!r} cannot be replayed: mockoss frames the body itself "
            "(Content-Length for a JSON body, chunked transfer encoding for a stream)"
        )
    return name


def check_header_value(value: str, what: str = "header value") -> str:
    """``value`` unchanged if HTTP can send it as a header value (module docstring); ``what``
    names it in the error.

    Raises:
        ValueError: a control character other than tab (CR, LF…), a character outside Latin-1, or a
            space or tab at either end.
    """
    if bad := _CONTROL.search(value):
        raise ValueError(f"{what} holds the control character {bad.group()!r}, which an HTTP header cannot carry")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} holds {value[error.start]!r}, which is not Latin-1: HTTP header values are sent as Latin-1 bytes"
        ) from None
    if value != value.strip(" \t"):
        raise ValueError(f"{what} starts or ends with a space or tab, which HTTP/1.1 (h11) refuses to send")
    return value


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` unchanged unless two names differ only in case (:exc:`ValueError`)."""
    seen: dict[str, str] = {}
    for name in headers:
        if (other := seen.setdefault(name.lower(), name)) != name:
            raise ValueError(f"header {name!r} is given twice ({other!r}): names compare case-insensitively")
    return headers


#: A replayed header's name, checked by :func:`check_header_name`.
HeaderName = Annotated[str, AfterValidator(check_header_name)]
#: A replayed header's value, checked by :func:`check_header_value`.
HeaderValue = Annotated[str, AfterValidator(check_header_value)]
