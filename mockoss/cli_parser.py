"""The ``mockoss`` command's argument parser: its subcommands, flags, help and value checks.

Split from :mod:`mockoss.cli`, which runs the commands. ``mockoss serve`` takes the flags ``vllm
serve`` has where they mean the same thing (``--host``, ``--port``, ``--served-model-name``,
``--seed``). Only the subcommand about to run gets its arguments (:func:`build_parser`): the others
are added with their help line alone, so ``mockoss --version``, ``mockoss --help`` and ``mockoss
validate`` import neither the server's settings, the upstream and engine flags nor the eval and
explain commands (the eighteenth session's newcomer, item 7: ``mockoss --version`` took 1.6 s on
a busy machine).
"""

from __future__ import annotations

import argparse
import os

from mockoss import __version__
from mockoss.cli_numbers import at_least_one, more_than_zero
from mockoss.cli_switch import Switches as _Switches
from mockoss.cli_switch import given_twice
from mockoss.cli_switch import switch_pairs as _switch

# The commands' modules (explain, eval, scenario, upstream, engines) are imported where they are
# used, after main() has paused the cyclic garbage collector for start-up (mockoss.cli.main).

__all__ = ["HELP", "build_parser", "given_twice", "subparser"]


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


#: The help line of each subcommand whose arguments live elsewhere or are added only when it runs
#: (:func:`build_parser`). ``eval``'s and ``explain``'s are their modules' ``HELP``, copied so that
#: the top-level help imports neither (``tests/test_cli_newcomer18.py`` checks they are equal).
HELP = {
    "serve": "serve a scenario over HTTP",
    "eval": "send one request N times to a server and print the distribution of outcomes",
    "explain": "show where the emulated servers disagree about a scenario's completions (--full: every row)",
    "profiles": "list the server profiles, their endpoints and switches (NAME: one profile in full)",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``mockoss`` parser. ``command``: the subcommand about to run (:func:`mockoss.cli._command`), if known.

    Only ``command`` gets its arguments; every other subcommand is added with its help line alone
    (:data:`HELP`), so the top-level help and an unknown subcommand's error still list them all.
    ``command`` ``None``: every subcommand in full (tests, and code that parses several commands);
    a name of no subcommand (``""``: none named, for ``--help``, ``--version`` or an error):
    none in full. The scenario commands (``scenarios``, ``validate``, ...) are always added in
    full: their arguments import nothing. So ``mockoss serve`` imports neither eval nor explain
    (issue 9, ``benchmarks/bench_start.py``; ``tests/test_start_imports.py``), and ``mockoss
    --version`` nothing of the server (the eighteenth session's newcomer, item 7).
    """
    from mockoss.scenario import commands as scenario_commands

    def full(name: str) -> bool:
        return command is None or command == name

    parser = argparse.ArgumentParser(prog="mockoss", description="A fake gpt-oss inference server for tests.")
    parser.add_argument("--version", action="version", version=f"mockoss {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help=HELP["serve"])
    if full("serve"):
        _add_serve_arguments(serve)
    scenario_commands.add_arguments(commands)  # scenarios, validate, schema, show, faults
    if full("eval"):
        from mockoss.eval import command as eval_command

        eval_command.add_arguments(commands.add_parser("eval", help=eval_command.HELP, description=eval_command.HELP))
    else:
        commands.add_parser("eval", help=HELP["eval"])
    if full("explain"):
        from mockoss import explain as explain_command

        explain_command.add_arguments(
            commands.add_parser("explain", help=explain_command.HELP, description=explain_command.HELP)
        )
    else:
        commands.add_parser("explain", help=HELP["explain"])
    profiles = commands.add_parser(
        "profiles",
        help=HELP["profiles"],
        description="List the server profiles with their endpoints and the names of their switches; "
        "with NAME, that profile's switches with their defaults, values and whole descriptions.",
    )
    if full("profiles"):
        profiles.add_argument(
            "name",
            nargs="?",
            metavar="NAME[@RELEASE]",
            help="one profile (e.g. vllm), or a release of one (vllm@0.26.0: its defaults), in full",
        )
        profiles.add_argument("--json", action="store_true", help="print JSON")
        profiles.add_argument(
            "--timeline",
            metavar="PROFILE",
            help="print the server's timeline: its releases and dated changes, with sources (e.g. vllm)",
        )
    return parser


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The subcommand ``name``'s parser in ``parser`` (:func:`build_parser`'s), for an error
    found after parsing that reads as that subcommand's usage error (``mockoss serve: error: ...``).

    Raises:
        KeyError: no such subcommand.
    """
    actions = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return next(actions).choices[name]


def _add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    """``mockoss serve``'s arguments (:func:`build_parser`)."""
    from mockoss.engines import cli as engine_cli
    from mockoss.profiles.registry import PROFILES
    from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SCENARIO_BYTES, DEFAULT_REQUEST_TIMEOUT_S
    from mockoss.upstream import cli as upstream_cli

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
        action=_Switches,
        default=[],
        metavar="NAME=VALUE[,…]",
        help="set profile switches (repeatable; a comma list as X-Mockoss-Switch takes; each switch once)",
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


def _profile_name(text: str) -> str:
    from mockoss.profiles.registry import PROFILES, unknown_profile_message
    from mockoss.profiles.releases import split_release

    if split_release(text)[0] not in PROFILES:
        raise argparse.ArgumentTypeError(unknown_profile_message(text))  # the marker's words, with "did you mean"
    return text
