"""``mockoss eval``: the command-line arguments and what the command does with them.

:mod:`mockoss.cli` adds the subcommand with :func:`add_arguments` and calls :func:`run_command`.
The modules that send and count (:mod:`~mockoss.eval.run`, :mod:`~mockoss.eval.report`) are
imported when the command runs: every ``mockoss`` command, ``serve`` included, builds this
subcommand's arguments (issue 9: ``mockoss serve``'s cold start).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any

from mockoss.cli_numbers import at_least_one, more_than_zero
from mockoss.eval.classify import SEP

if TYPE_CHECKING:
    from mockoss.eval.report import EvalResult

__all__ = ["HELP", "add_arguments", "run_command"]

HELP = "send one request N times to a server and print the distribution of outcomes"
BAR_WIDTH = 20


#: ``-n`` and ``--concurrency`` (:mod:`mockoss.cli_numbers`, shared with ``mockoss serve``).
_positive_int = at_least_one("request")
#: ``--timeout``: finite, so that a server that never answers cannot hold the run for ever
#: (``inf`` was accepted until the eighteenth session; :mod:`mockoss.cli_numbers`).
_positive_float = more_than_zero("seconds")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``mockoss eval``'s arguments to its subparser."""
    parser.add_argument(
        "--url",
        required=True,
        help="the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (a root URL gets /v1)",
    )
    parser.add_argument(
        "--request",
        required=True,
        metavar="FILE",
        help='JSON or YAML: {"endpoint": "responses"|"chat", "body": {...}}, or a body alone '
        "(input: Responses, messages: Chat Completions)",
    )
    parser.add_argument("-n", type=_positive_int, default=40, help="requests to send (default: 40)")
    parser.add_argument(
        "--concurrency", type=_positive_int, default=8, metavar="K", help="requests in flight at once (default: 8)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=120.0,
        metavar="S",
        help="seconds per request in total (default: 120)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--save", metavar="OUT.json", help="also write the result as JSON to this file")
    parser.add_argument(
        "--compare", metavar="BEFORE.json", help="print a before/after table against a result saved with --save"
    )
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="send 'Authorization: Bearer $VAR' (default: $OPENAI_API_KEY if set; the key is never printed)",
    )


def _error(message: str) -> int:
    print(f"mockoss eval: error: {message}", file=sys.stderr)
    return 2


def _headers(var: str | None) -> dict[str, str] | str:
    """Request headers, or an error message. Only the variable's name ever reaches output."""
    if var is not None:
        key = os.environ.get(var)
        if not key:
            return f"--api-key-env: environment variable {var} is not set"
        return {"Authorization": f"Bearer {key}"}
    key = os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def _load_before(path: str) -> EvalResult:
    from mockoss.eval.report import EvalResult, ResultFileError

    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except OSError as exc:
        raise ResultFileError(f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ResultFileError(f"not JSON: {exc}") from None
    return EvalResult.from_json(data)


def _progress_bar(stream: IO[str]) -> Any:
    def show(done: int, n: int) -> None:
        filled = BAR_WIDTH * done // n
        stream.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{n}")
        if done == n:
            stream.write("\n")
        stream.flush()

    return show


def _unwritable(path: str) -> str | None:
    """Why ``--save`` could not write ``path``, found before any request is sent (before session
    16, ``--save DIR`` sent all N requests and then failed: the sixteenth session's breaker, item
    12), or ``None``. Nothing is created: the file is written once the run is done."""
    import os
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        return "a directory (name a file, e.g. OUT.json)"
    folder = target.parent
    if not folder.is_dir():
        return f"no such directory {str(folder)!r}"
    if target.exists() and not os.access(target, os.W_OK):
        return "permission denied"
    if not target.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"permission denied in {str(folder)!r}"
    return None


def run_command(args: argparse.Namespace) -> int:
    """Run ``mockoss eval`` with parsed arguments; return the exit code.

    0 once every request has an outcome from the endpoint (whatever the outcomes are); 3 when a
    request could not reach it: a connection error (nothing listening), or HTTP 404/405 (the URL
    is not the server's base URL), after printing the table and a line saying so; 2 for bad
    arguments, unreadable files or a ``--save`` path that cannot be written (a directory, a missing
    folder, no permission), before any request is sent; 1 when ``--save`` still fails to write its
    file at the end; 130 on Ctrl-C. A root URL (``http://HOST:PORT``) is taken as ``http://HOST:PORT/v1``.
    """
    from mockoss.eval.report import EvalResult, ResultFileError, compare_rows, format_compare, format_table
    from mockoss.eval.run import RequestFileError, load_request, run_requests

    if not args.url.startswith(("http://", "https://")):
        example = "http://127.0.0.1:8000/v1"
        return _error(f"--url: expected an http:// or https:// base URL such as {example}, got {args.url!r}")
    args.url = base_url(args.url)
    try:
        request = load_request(args.request)
    except RequestFileError as exc:
        return _error(f"--request: {exc}")
    before = None
    if args.compare:
        try:
            before = _load_before(args.compare)
        except ResultFileError as exc:
            return _error(f"--compare: {args.compare}: {exc}")
    headers = _headers(args.api_key_env)
    if isinstance(headers, str):
        return _error(headers)
    if args.save and (problem := _unwritable(args.save)):
        return _error(f"--save: {args.save}: cannot write: {problem}")

    progress = _progress_bar(sys.stderr) if sys.stderr.isatty() else None
    try:
        keys, elapsed = run_requests(
            request,
            args.url,
            args.n,
            concurrency=args.concurrency,
            timeout=args.timeout,
            headers=headers,
            progress=progress,
        )
    except KeyboardInterrupt:
        print("\nmockoss eval: interrupted", file=sys.stderr)
        return 130
    result = EvalResult.from_keys(args.url, args.request, keys, elapsed)
    data = result.to_json()
    if before is not None:
        rows = compare_rows(before, result)
        data["compare"] = {
            "before": args.compare,
            "outcomes": [{"outcome": key, "before": old, "after": new} for key, old, new in rows],
        }

    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(format_compare(before, result) if before is not None else format_table(result))
        print(f"\n{result.n} requests to {request.url(args.url)} in {elapsed:.2f} s, concurrency {args.concurrency}")
    if args.save:
        try:
            with open(args.save, "w", encoding="utf-8") as file:
                file.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        except OSError as exc:
            print(f"mockoss eval: error: --save: {args.save}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 1
    unreachable = _unreachable(keys)
    if unreachable:
        count, reason = unreachable
        print(
            f"mockoss eval: error: {count} of {len(keys)} requests did not reach {request.url(args.url)}: {reason}",
            file=sys.stderr,
        )
        return 3
    return 0


def base_url(url: str) -> str:
    """``url`` without trailing slashes; a root URL (no path) gets ``/v1``."""
    from urllib.parse import urlsplit

    url = url.rstrip("/")
    return url + "/v1" if urlsplit(url).path in ("", "/") else url


def _unreachable(keys: list[str]) -> tuple[int, str] | None:
    """``(count, reason)`` when some outcome says the endpoint was not reached, else ``None``."""
    refused = [k for k in keys if k.startswith("connection error")]
    missing = [k for k in keys if k.split(SEP, 1)[0] in ("404", "405")]
    if refused:
        return len(refused), "connection error (is the server running, and is --url right?): " + refused[0].split(
            SEP, 1
        )[-1]
    if missing:
        status, _, text = missing[0].partition(SEP)
        return len(missing), (
            f"HTTP {status} ({text}); check --url (the server's base URL, e.g. http://127.0.0.1:8000/v1) "
            "and the request's model"
        )
    return None
