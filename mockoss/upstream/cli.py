"""The ``mockoss serve`` flags for real backends and recording, and what they build."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from mockoss.upstream.config import DEFAULT_TIMEOUT_S, MODES, PROMPT_FORMS, UpstreamError

if TYPE_CHECKING:
    from mockoss.upstream.config import Upstream
    from mockoss.upstream.record import Recorder

__all__ = ["add_arguments", "describe", "from_args"]

_UPSTREAM_ONLY = ("upstream_mode", "upstream_api_key_env", "upstream_model", "upstream_timeout", "upstream_prompt")


def add_arguments(serve: argparse.ArgumentParser) -> None:
    """Add ``--upstream*``, ``--record*`` and ``--redact`` to the ``serve`` parser."""
    group = serve.add_argument_group("real backends (README: Real backends)")
    group.add_argument("--upstream", metavar="URL", help="answer from a real OpenAI-compatible gpt-oss server at URL")
    group.add_argument(
        "--upstream-mode",
        choices=MODES,
        help=(
            "pass: forward requests unchanged (default); raw: surface its raw Harmony completions through --profile; "
            "scripted: the internal mode of --engine vllm (the scenario's completion token ids sent in vllm_xargs, "
            "which only a vLLM running mockoss's scripted model follows; any other upstream answers on its own)"
        ),
    )
    group.add_argument("--upstream-api-key-env", metavar="VAR", help="send the key in environment variable VAR as the bearer token")
    group.add_argument("--upstream-model", metavar="NAME", help="raw mode: model name sent upstream (default: the request's)")
    group.add_argument(
        "--upstream-timeout", type=float, metavar="S", help=f"longest wait for the upstream, seconds (default: {DEFAULT_TIMEOUT_S:g})"
    )
    group.add_argument("--upstream-prompt", choices=PROMPT_FORMS, help="raw mode: send the prompt as token ids (default) or text")
    group.add_argument("--record", metavar="DIR", help="write every exchange as a scenario step to DIR/NAME.yaml")
    group.add_argument("--record-name", metavar="NAME", help="recording name (default: --scenario's name without --upstream, else 'recording')")
    group.add_argument("--record-match", action="store_true", help="one rule per exchange, matching its last user message")
    group.add_argument("--redact", action="store_true", help="replace emails, phone numbers and names in recorded prompts")


def from_args(args: argparse.Namespace) -> tuple[Upstream | None, Recorder | None]:
    """The :class:`~mockoss.upstream.Upstream` and :class:`~mockoss.upstream.Recorder` the flags ask for.

    Raises:
        UpstreamError: a flag that needs ``--upstream`` (or ``--record``) without it, an unset API
            key variable, a bad URL, or a recording directory that cannot be created.
    """
    from mockoss.upstream.config import Upstream

    upstream = None
    if args.upstream:
        options = {
            "mode": args.upstream_mode or "pass",
            "model": args.upstream_model,
            "timeout_s": args.upstream_timeout or DEFAULT_TIMEOUT_S,
            "prompt": args.upstream_prompt or "tokens",
        }
        upstream = Upstream.from_env(args.upstream, api_key_env=args.upstream_api_key_env, **options)
    else:
        given = [f"--{name.replace('_', '-')}" for name in _UPSTREAM_ONLY if getattr(args, name) is not None]
        if given:
            raise UpstreamError(f"{', '.join(given)} needs --upstream URL")
    if not args.record:
        given = [flag for flag, on in (("--record-name", args.record_name), ("--record-match", args.record_match), ("--redact", args.redact)) if on]
        if given:
            raise UpstreamError(f"{', '.join(given)} needs --record DIR")
        return upstream, None
    name = args.record_name or (Path(args.scenario).stem if args.scenario and not upstream else "recording")
    from mockoss.upstream.record import Recorder  # only with --record: serving without it never loads the recorder

    try:
        recorder = Recorder(args.record, name, redact=args.redact, match=args.record_match, seed=args.seed)
    except (ValueError, OSError) as exc:
        raise UpstreamError(f"--record: {exc}") from None
    return upstream, recorder


def describe(upstream: Upstream | None, recorder: Recorder | None) -> str:
    """The start-up line about them, e.g. ``upstream http://h:8000 (raw mode), recording to DIR/x.yaml``."""
    parts = []
    if upstream is not None:
        parts.append(f"upstream {upstream.safe_url} ({'pass-through' if upstream.mode == 'pass' else upstream.mode} mode)")
    if recorder is not None:
        parts.append(f"recording to {recorder.path}")
    return ", ".join(parts)
