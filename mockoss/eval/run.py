"""Send one request N times to an OpenAI-compatible server and classify every answer.

The request comes from a JSON or YAML file, either ``{"endpoint": "responses" | "chat", "body":
{…}}`` or the body alone, whose endpoint is then inferred (``input`` ⇒ Responses, ``messages`` ⇒
Chat Completions). Requests run on one asyncio loop with :class:`httpx2.AsyncClient`, at most
``concurrency`` at a time; each gets ``timeout`` seconds in total (connect + head + whole body,
streams included). Every answer is read to the end and classified by
:func:`mockoss.eval.classify.classify`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from mockoss.eval.classify import Exchange, classify

__all__ = ["PATHS", "EvalRequest", "RequestFileError", "load_request", "request_from_data", "run_requests"]

#: Endpoint name → path below the base URL (``…/v1``); names and paths as in
#: :data:`mockoss.endpoints.ENDPOINTS` (a test checks they agree).
PATHS: Mapping[str, str] = {"chat": "/chat/completions", "responses": "/responses"}

#: ``progress(done, n)``, called after each request completes.
Progress = Callable[[int, int], None]


class RequestFileError(ValueError):
    """A request file cannot be read or is not a request; ``str()`` names the file and the problem."""


@dataclass(frozen=True, slots=True)
class EvalRequest:
    """What to send: an endpoint name and a JSON body.

    Attributes:
        endpoint: ``"responses"`` or ``"chat"``.
        body: the JSON body, sent unchanged every time.
    """

    endpoint: Literal["responses", "chat"]
    body: Mapping[str, Any]

    @property
    def stream(self) -> bool:
        """The body asks for a streamed answer (``"stream": true``)."""
        return self.body.get("stream") is True

    def url(self, base_url: str) -> str:
        """``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) + this endpoint's path."""
        return base_url.rstrip("/") + PATHS[self.endpoint]


def request_from_data(data: Any, origin: str = "<request>") -> EvalRequest:
    """Build an :class:`EvalRequest` from parsed file contents.

    Raises:
        RequestFileError: not an object; ``endpoint`` is not ``responses``/``chat``; ``body`` is
            not an object; or, without ``endpoint``, neither ``input`` nor ``messages`` is present.
    """
    if not isinstance(data, Mapping):
        raise RequestFileError(f"{origin}: expected a JSON object (a request body, or {{endpoint, body}})")
    if "endpoint" in data:
        endpoint, body = data["endpoint"], data.get("body")
        if endpoint not in PATHS:
            raise RequestFileError(f"{origin}: endpoint: expected one of 'chat', 'responses', got {endpoint!r}")
        if not isinstance(body, Mapping):
            raise RequestFileError(f"{origin}: body: expected the request body as an object")
        return EvalRequest(endpoint, dict(body))
    if "input" in data and "messages" not in data:
        return EvalRequest("responses", dict(data))
    if "messages" in data and "input" not in data:
        return EvalRequest("chat", dict(data))
    raise RequestFileError(
        f"{origin}: cannot tell the endpoint: give 'endpoint' (chat or responses) and 'body', or a body "
        "with 'input' (Responses) or 'messages' (Chat Completions)"
    )


def load_request(path: str | Path) -> EvalRequest:
    """Read a request file (JSON, or YAML: JSON is valid YAML).

    Raises:
        RequestFileError: the file cannot be read or parsed, or is not a request.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestFileError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise RequestFileError(f"{where}: not valid JSON or YAML: {getattr(exc, 'problem', None) or exc}") from None
    return request_from_data(data, str(path))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


async def _exchange(client: Any, request: EvalRequest, url: str, timeout: float) -> Exchange:
    import httpx2

    status: int | None = None
    media_type = ""
    body = bytearray()
    failure: Literal["connection", "timeout"] | None = None
    failure_text = ""
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("POST", url, json=request.body) as response:
                status = response.status_code
                media_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                async for chunk in response.aiter_bytes():
                    body += chunk
    except TimeoutError:
        failure, failure_text = "timeout", f"no complete answer within {timeout:g} s"
    except httpx2.TimeoutException as exc:
        failure, failure_text = "timeout", type(exc).__name__
    except httpx2.RequestError as exc:
        failure, failure_text = "connection", _first_line(exc)
    return Exchange(request.endpoint, request.stream, status, bytes(body), media_type, failure, failure_text)


async def _run(
    request: EvalRequest,
    base_url: str,
    n: int,
    concurrency: int,
    timeout: float,
    headers: Mapping[str, str],
    progress: Progress | None,
) -> list[str]:
    import httpx2

    url = request.url(base_url)
    keys: list[str] = [""] * n
    next_index = 0
    done = 0
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    # No per-phase httpx timeouts: only the total one in _exchange, so a slow server always gives
    # the same outcome key, whichever phase it is slow in.
    async with httpx2.AsyncClient(timeout=None, limits=limits, headers=dict(headers)) as client:

        async def worker() -> None:
            nonlocal next_index, done
            while next_index < n:
                index, next_index = next_index, next_index + 1
                keys[index] = classify(await _exchange(client, request, url, timeout))
                done += 1
                if progress is not None:
                    progress(done, n)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, n))))
    return keys


def run_requests(
    request: EvalRequest,
    base_url: str,
    n: int,
    *,
    concurrency: int = 8,
    timeout: float = 120.0,
    headers: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> tuple[list[str], float]:
    """Send ``request`` ``n`` times; return the outcome keys (in request order) and the elapsed
    wall-clock seconds.

    Args:
        base_url: the server's OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8000/v1``.
        concurrency: requests in flight at once (≥ 1).
        timeout: seconds each request may take in total, streamed body included.
        headers: extra request headers (e.g. ``Authorization``).
        progress: called as ``progress(done, n)`` after each request.

    Never raises for what the server does: refused connections, timeouts and dropped streams
    are outcomes. Must not be called from a running event loop (it runs its own).
    """
    start = time.perf_counter()
    keys = asyncio.run(_run(request, base_url, n, max(1, concurrency), timeout, headers or {}, progress))
    return keys, time.perf_counter() - start
