"""The ``mockoss`` command's argument parser: its subcommands, flags, help and value checks.

Split from :mod:`mockoss.cli`, which runs the commands. ``mockoss serve`` takes the flags ``vllm
serve`` has where they mean the same thing (``--host``, ``--port``, ``--served-model-name``,
``--seed``). ``eval`` and ``explain`` stay lazy here (:func:`build_parser`): building the parser for
``mockoss serve`` imports neither.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from mockoss import __version__
from mockoss.cli_numbers import at_least_one, more_than_zero
from mockoss.profiles.registry import PROFILES, unknown_profile_message
from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SCENARIO_BYTES, DEFAULT_REQUEST_TIMEOUT_S

# The commands' modules (explain, eval, scenario, upstream, engines) are imported where they are
# used, after main() has paused the cyclic garbage collector for start-up (mockoss.cli.main).

__all__ = ["build_parser"]


#: ``--max-body-bytes``; the other counts name their own outcome (:func:`mockoss.cli_numbers.at_least_one`).
_positive_int = at_least_one("byte", "every request would get 413")
#: ``--request-timeout``: 0 closed every connection before its reply, a negative one every request
#: head not sent in one packet, and ``nan`` never timed out (the sixteenth session's breaker, item 11).
_positive_seconds = more_than_zero("seconds")
#: ``--tool-check-budget-ms``.
_positive_ms = more_than_zero("milliseconds", "ms")


def _model_name(text: str) -> str:
    """A non-empty model name (``--served-model-name``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a model name cannot be empty")
    return text


def _directory(text: str) -> str:
    """An existing directory (``--scenario-dir``): a mistyped one would leave every
    ``X-Mockoss-Scenario`` naming its files a 400 at request time, far from the cause."""
    from pathlib import Path

    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"not a directory: {text!r}")
    return text


def _switch(text: str) -> list[tuple[str, Any]]:
    """``NAME=VALUE[,NAME=VALUE…]``, the list the ``X-Mockoss-Switch`` header takes, each value
    plain YAML as the header reads it (:func:`mockoss.scenario.yamlsafe.load_plain`: no tags,
    aliases bounded); a value that is not is a usage error, not a traceback (issue 9 review,
    eighth session, finding 8)."""
    import yaml

    from mockoss.scenario.yamlsafe import YamlLimitError, load_plain

    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE…], got {item!r} in {text!r}")
        try:
            pairs.append((name.strip(), load_plain(value)))
        except (yaml.YAMLError, YamlLimitError) as exc:  # load_plain turns a RecursionError into YamlLimitError
            raise argparse.ArgumentTypeError(
                f"{name.strip()}: not a plain YAML value: {exc}".replace("\n", " ")
            ) from None
    if not pairs:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE…], got {text!r}")
    return pairs


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``mockoss`` parser. ``command``: the subcommand about to run (:func:`mockoss.cli._command`), if known.

    ``eval`` and ``explain`` keep their arguments and help in their own modules, which import what
    those commands run (the eval sender, the explain tables). When another known subcommand runs,
    they are added bare, without importing them: only ``mockoss --help`` and an error naming no
    known subcommand show the subcommands' help, and those build the whole parser. So ``mockoss
    serve`` does not import them (issue 9, ``benchmarks/bench_start.py``;
    ``tests/test_start_imports.py``).
    """
    from mockoss.engines import cli as engine_cli
    from mockoss.scenario import commands as scenario_commands
    from mockoss.upstream import cli as upstream_cli

    parser = argparse.ArgumentParser(prog="mockoss", description="A fake gpt-oss inference server for tests.")
    parser.add_argument("--version", action="version", version=f"mockoss {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve a scenario over HTTP")
    serve.add_argument("--scenario", help="a shipped scenario name or a YAML file path")
    serve.add_argument(
        "--profile",
        default="vllm",
        type=_profile_name,
        metavar="PROFILE[@RELEASE]",
        help=f"server to emulate: {', '.join(PROFILES)}, or a release such as vllm@0.26.0 "
        "(mockoss profiles --timeline vllm lists them; default: vllm, the newest)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port, 0 for a free one (default: 8000)")
    serve.add_argument(
        "--served-model-name",
        nargs="+",
        type=_model_name,
        default=None,
        help="model name(s) to answer to (default: the profile's, e.g. openai/gpt-oss-20b, gpt-oss:20b for ollama)",
    )
    serve.add_argument("--seed", type=int, default=0, help="seed for ids and generated content (default: 0)")
    serve.add_argument(
        "--auto-session",
        action="store_true",
        help="a rule cursor per conversation without X-Mockoss-Session, keyed by its system text and first "
        "user message (README: Turns and sessions)",
    )
    serve.add_argument(
        "--switch",
        type=_switch,
        action="extend",
        default=[],
        metavar="NAME=VALUE[,…]",
        help="set profile switches (repeatable; a comma list as X-Mockoss-Switch takes)",
    )
    serve.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument(
        "--stream-interval",
        type=int,
        metavar="N",
        help="vLLM's --stream-interval: stream N tokens per chunk (the profile switch stream_interval)",
    )
    serve.add_argument("--ttft-ms", type=float, metavar="MS", help="default time to first token, ms (transport)")
    serve.add_argument("--tokens-per-s", type=float, metavar="N", help="default stream pacing, frames (tokens) per s")
    limits = serve.add_argument_group("limits (README: Limits)")
    limits.add_argument(
        "--max-body-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_BODY_BYTES,
        metavar="N",
        help=f"largest request body; larger ones get 413 in the profile's error shape (default: {DEFAULT_MAX_BODY_BYTES:,})",
    )
    limits.add_argument(
        "--body-budget-bytes",
        type=at_least_one("byte", "every request with a body would get 503"),
        default=None,
        metavar="N",
        help="bytes all request bodies still arriving may hold together; a body whose next part would pass it "
        "gets 503 in the profile's error shape (default: 4 x --max-body-bytes)",
    )
    limits.add_argument(
        "--max-reply-bytes",
        type=at_least_one("byte", "every /v1/completions reply would be a 400"),
        default=None,
        metavar="N",
        help="largest /v1/completions reply (JSON body, or all frames of a stream) of the vLLM and TensorRT-LLM "
        "profiles, in UTF-8 bytes; a bigger batch gets a 400 (default: 33,554,432, 32 MiB)",
    )
    limits.add_argument(
        "--request-timeout",
        type=_positive_seconds,
        default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="S",
        help="seconds a client has to send a request head (idle and half-sent connections are closed), "
        f"and then its body (408) (default: {DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    limits.add_argument(
        "--max-template-chars",
        type=at_least_one("character", "every templated reply would be a 400"),
        default=None,
        metavar="N",
        help="longest text a scenario template may render per request; longer is a 400 (default: 8,192). "
        "Each templated character costs every other client ~4 us of waiting (README: Templates)",
    )
    limits.add_argument(
        "--tool-check-budget-ms",
        type=_positive_ms,
        default=None,
        metavar="MS",
        help="CPU a request's tool checks (scripted calls' arguments against its declared JSON Schemas) may use "
        "together; the rest are skipped with a warning (default: 25). Other clients wait while they run "
        "(README: Tool checks)",
    )
    limits.add_argument(
        "--scenario-dir",
        action="append",
        default=[],
        metavar="DIR",
        type=_directory,
        help="a directory whose NAME.yaml files X-Mockoss-Scenario: NAME may select (repeatable; searched "
        "in order, before the shipped scenarios: DIR/clean-answer.yaml answers for clean-answer); a file may "
        "be a symlink, and one edited or deleted is read again at its next use; no other file is ever "
        "opened for that header",
    )
    upstream_cli.add_arguments(serve)  # --upstream*, --record*, --redact
    control = serve.add_argument_group("control routes /mockoss/* (README: Sharing one server)")
    control.add_argument(
        "--admin-token",
        metavar="TOKEN",
        default=os.environ.get("MOCKOSS_ADMIN_TOKEN") or None,
        help="require this token on the control routes (default: $MOCKOSS_ADMIN_TOKEN)",
    )
    control.add_argument(
        "--allowed-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a Host name the control routes accept besides loopback ones (repeatable), e.g. a compose service name",
    )
    control.add_argument("--access-log", action="store_true", help="print one line per request to stderr")
    control.add_argument(
        "--max-scenario-bytes",
        type=at_least_one("byte", "every scenario upload would get 413"),
        default=DEFAULT_MAX_SCENARIO_BYTES,
        metavar="N",
        help="largest POST /mockoss/scenario upload (larger: 413) and --scenario-dir file a request names "
        f"(larger: 400); the sessions keep 8x this of uploaded scenarios together (default: {DEFAULT_MAX_SCENARIO_BYTES:,})",
    )
    engine_cli.add_arguments(serve)  # --engine vllm, --vllm-*

    scenario_commands.add_arguments(commands)  # scenarios, validate, schema
    # eval, explain and profiles are added below; the other subcommands are in commands.choices by now.
    bare = command is not None and command not in ("eval", "explain") and command in {*commands.choices, "profiles"}
    if bare:
        commands.add_parser("eval")
        commands.add_parser("explain")
    else:
        from mockoss import explain as explain_command
        from mockoss.eval import command as eval_command

        eval_command.add_arguments(commands.add_parser("eval", help=eval_command.HELP, description=eval_command.HELP))
        explain_command.add_arguments(
            commands.add_parser("explain", help=explain_command.HELP, description=explain_command.HELP)
        )
    profiles = commands.add_parser("profiles", help="list the server profiles, their endpoints and switches")
    profiles.add_argument("--json", action="store_true", help="print JSON")
    profiles.add_argument(
        "--timeline",
        metavar="PROFILE",
        help="print the server's timeline: its releases and dated changes, with sources (e.g. vllm)",
    )
    return parser


def _profile_name(text: str) -> str:
    from mockoss.profiles.releases import split_release

    if split_release(text)[0] not in PROFILES:
        raise argparse.ArgumentTypeError(unknown_profile_message(text))  # the marker's words, with "did you mean"
    return text
