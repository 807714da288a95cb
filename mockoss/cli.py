"""The ``mockoss`` command line.

``mockoss serve`` takes the flags ``vllm serve`` has where they mean the same thing
(``--host``, ``--port``, ``--served-model-name``, ``--seed``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from mockoss import __version__
from mockoss.profiles.registry import PROFILES, ProfileError
from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SCENARIO_BYTES, DEFAULT_REQUEST_TIMEOUT_S

# The commands' modules (explain, eval, scenario, upstream, engines) are imported where they are
# used, after main() has paused the cyclic garbage collector for start-up (see main()).

__all__ = ["main"]


def _positive_int(text: str) -> int:
    """An integer of at least 1 (``--max-body-bytes``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of bytes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 byte, got {value} (every request would get 413)")
    return value


def _positive_ms(text: str) -> float:
    """A number of milliseconds above 0 (``--tool-check-budget-ms``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of milliseconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected more than 0 ms, got {text!r}")
    return value


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
            raise argparse.ArgumentTypeError(f"{name.strip()}: not a plain YAML value: {exc}".replace("\n", " ")) from None
    if not pairs:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE[,NAME=VALUE…], got {text!r}")
    return pairs


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``mockoss`` parser. ``command``: the subcommand about to run (:func:`_command`), if known.

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
        "--max-body-bytes", type=_positive_int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
        help=f"largest request body; larger ones get 413 in the profile's error shape (default: {DEFAULT_MAX_BODY_BYTES:,})",
    )
    limits.add_argument(
        "--max-reply-bytes", type=_positive_int, default=None, metavar="N",
        help="largest /v1/completions reply (JSON body, or all frames of a stream) of the vLLM and TensorRT-LLM "
        "profiles, in UTF-8 bytes; a bigger batch gets a 400 (default: 33,554,432, 32 MiB)",
    )
    limits.add_argument(
        "--request-timeout", type=float, default=DEFAULT_REQUEST_TIMEOUT_S, metavar="S",
        help="seconds a client has to send a request head (idle and half-sent connections are closed), "
        f"and then its body (408) (default: {DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    limits.add_argument(
        "--max-template-chars", type=_positive_int, default=None, metavar="N",
        help="longest text a scenario template may render per request; longer is a 400 (default: 8,192). "
        "Each templated character costs every other client ~4 us of waiting (README: Templates)",
    )
    limits.add_argument(
        "--tool-check-budget-ms", type=_positive_ms, default=None, metavar="MS",
        help="CPU a request's tool checks (scripted calls' arguments against its declared JSON Schemas) may use "
        "together; the rest are skipped with a warning (default: 25). Other clients wait while they run "
        "(README: Tool checks)",
    )
    limits.add_argument(
        "--scenario-dir", action="append", default=[], metavar="DIR", type=_directory,
        help="a directory whose NAME.yaml files X-Mockoss-Scenario: NAME may select (repeatable); "
        "no other file is ever opened for that header",
    )
    upstream_cli.add_arguments(serve)  # --upstream*, --record*, --redact
    control = serve.add_argument_group("control routes /mockoss/* (README: Sharing one server)")
    control.add_argument(
        "--admin-token", metavar="TOKEN", default=os.environ.get("MOCKOSS_ADMIN_TOKEN") or None,
        help="require this token on the control routes (default: $MOCKOSS_ADMIN_TOKEN)",
    )
    control.add_argument(
        "--allowed-host", metavar="NAME", action="append", default=[],
        help="a Host name the control routes accept besides loopback ones (repeatable), e.g. a compose service name",
    )
    control.add_argument("--access-log", action="store_true", help="print one line per request to stderr")
    control.add_argument(
        "--max-scenario-bytes", type=_positive_int, default=DEFAULT_MAX_SCENARIO_BYTES, metavar="N",
        help="largest POST /mockoss/scenario upload; larger ones get 413, and the sessions keep 8x this of "
        f"uploaded scenarios together (default: {DEFAULT_MAX_SCENARIO_BYTES:,})",
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
        explain_command.add_arguments(commands.add_parser("explain", help=explain_command.HELP, description=explain_command.HELP))
    profiles = commands.add_parser("profiles", help="list the server profiles, their endpoints and switches")
    profiles.add_argument("--json", action="store_true", help="print JSON")
    profiles.add_argument(
        "--timeline",
        metavar="PROFILE",
        help="print the server's timeline: its releases and dated changes, with sources (e.g. vllm)",
    )
    return parser


def _serve(args: argparse.Namespace) -> int:
    from mockoss.engines import EngineError
    from mockoss.engines import cli as engine_cli
    from mockoss.harmony.encoding import load_encoding
    from mockoss.scenario.loader import ScenarioError
    from mockoss.scenario.transport import TransportError
    from mockoss.server.core import MockServer
    from mockoss.server.run import base_url, bind, serve_forever
    from mockoss.upstream import cli as upstream_cli
    from mockoss.upstream.config import UpstreamError

    load_encoding()  # a broken vocabulary cache is reported here, as what it is (main())
    if args.max_reply_bytes is not None:  # the profiles read it per request
        from mockoss.profiles import reply_limit

        reply_limit.MAX_REPLY_BYTES = args.max_reply_bytes
    if args.max_template_chars is not None:  # before the scenario loads: its literal text is checked then
        from mockoss.scenario import template

        template.MAX_RENDERED_CHARS = args.max_template_chars
    if args.tool_check_budget_ms is not None:
        from mockoss.scenario import tool_check

        tool_check.REQUEST_BUDGET_S = args.tool_check_budget_ms / 1000

    engine = None
    try:
        upstream, recorder = upstream_cli.from_args(args)
        server = MockServer(
            scenario=args.scenario,
            profile=args.profile,
            switches=_serve_switches(args),
            served_model_names=args.served_model_name,
            seed=args.seed,
            request_log_limit=10_000,
            max_body_bytes=args.max_body_bytes,
            scenario_dirs=tuple(args.scenario_dir),
            transport={k: v for k, v in (("ttft_ms", args.ttft_ms), ("tokens_per_s", args.tokens_per_s)) if v is not None}
            or None,
            upstream=upstream,
            recorder=recorder,
            auto_session=args.auto_session,
        )
        engine = engine_cli.start(args, args.served_model_name)  # after the scenario is known to load
        if engine is not None:
            from mockoss.upstream import Upstream

            server.upstream = upstream = Upstream(engine.url, mode="scripted")
    except (ScenarioError, ProfileError, TransportError, UpstreamError, EngineError) as exc:
        if engine is not None:
            engine.stop()
        print(f"mockoss: error: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        if engine is not None:
            engine.stop()
        print(f"mockoss: error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if server.scenario:
        scenario = server.scenario.name
    elif server.upstream is not None:
        scenario = "none (requests go upstream)"
    else:
        scenario = "none (send X-Mockoss-Scenario)"
    switches = ", ".join(f"{k}={v}" for k, v in sorted(_serve_switches(args).items()))
    print(f"mockoss {__version__}: profile {args.profile}, scenario {scenario}" + (f", switches {switches}" if switches else ""), flush=True)
    print(f"base URL: {base_url(sock)}/v1", flush=True)
    print(f"root URL: {base_url(sock)} (native APIs such as Ollama's /api/chat)", flush=True)
    if upstream is not None or recorder is not None:
        print(f"real backends: {upstream_cli.describe(upstream, recorder)}", flush=True)
    if not _loopback(args.host) and not args.admin_token:
        print(
            f"mockoss: warning: listening on {args.host}, beyond loopback, with no --admin-token: anyone who can reach "
            "the port can use the API, and with an allowed Host read every request log and reset the server "
            "(README: Sharing one server)",
            file=sys.stderr,
            flush=True,
        )
    try:
        from mockoss.server.control import ControlOptions

        options = ControlOptions(
            admin_token=args.admin_token, allowed_hosts=tuple(args.allowed_host), access_log=args.access_log,
            max_scenario_bytes=args.max_scenario_bytes,
        )
        serve_forever(server, sock, log_level=args.log_level, control=options, request_timeout_s=args.request_timeout)
    except KeyboardInterrupt:
        pass
    finally:
        if recorder is not None:
            recorder.close()
        if engine is not None:
            engine.stop()
    return 0


def _loopback(host: str) -> bool:
    """Whether ``host`` (a ``--host`` value) only listens on this machine's loopback interface."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mockoss`` command; returns the exit code.

    The cyclic garbage collector is paused while the command starts: importing the server stack,
    loading the encoding and a scenario and building the app create only objects that live as long
    as the process, and walking them again and again cost ``mockoss serve`` about 60 ms of its
    start (issue 9, ``benchmarks/bench_start.py``). Other commands turn it back on once their
    arguments are parsed; ``serve`` collects once, freezes what it loaded and turns it back on
    before it answers requests (:func:`mockoss.server.run.serve_forever`).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _checked_main(argv, collecting)
    finally:
        if collecting:
            gc.enable()


def _checked_main(argv: Sequence[str] | None, collecting: bool) -> int:
    from mockoss.harmony.encoding import HarmonyLibraryError, VocabularyError, check_harmony_library

    try:
        check_harmony_library()  # before anything cached can hide the wrong library
        return _main(argv, collecting)
    except BrokenPipeError:  # `mockoss explain … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except HarmonyLibraryError as exc:  # the wrong Harmony library: one clear line, no traceback
        print(f"mockoss: error: {exc}", file=sys.stderr)
        return 2
    except VocabularyError as exc:  # every command needs the tokenizer: one clear line, no traceback
        print(f"mockoss: error: the o200k_base vocabulary cannot be loaded: {exc}", file=sys.stderr)
        return 2


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word, unless an option comes first (the top-level
    parser has only ``--help`` and ``--version``, so that is help, the version or an error)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def _main(argv: Sequence[str] | None, collecting: bool = True) -> int:
    if argv is None:
        argv = sys.argv[1:]
    args = _parser(_command(argv)).parse_args(argv)
    if args.command == "serve":
        return _serve(args)  # serve_forever turns the collector back on
    if collecting:
        gc.enable()
    if args.command == "eval":
        from mockoss.eval import command as eval_command

        return eval_command.run_command(args)
    if args.command == "explain":
        from mockoss import explain as explain_command

        return explain_command.run_command(args)
    if args.command == "profiles":
        return _profiles(args)
    from mockoss.scenario import commands as scenario_commands

    return scenario_commands.run(args)


def _profile_name(text: str) -> str:
    from mockoss.profiles.releases import split_release

    if split_release(text)[0] not in PROFILES:
        raise argparse.ArgumentTypeError(f"unknown profile {text!r}; profiles: {', '.join(PROFILES)} (a release: vllm@0.26.0)")
    return text


def _serve_switches(args: argparse.Namespace) -> dict[str, Any]:
    switches = dict(args.switch)
    if getattr(args, "stream_interval", None) is not None:
        switches["stream_interval"] = args.stream_interval
    return switches


def _profiles(args: argparse.Namespace) -> int:
    from mockoss.profiles.catalog import describe_profiles, format_profiles

    if args.timeline:
        return _timeline(args)
    described = describe_profiles()
    print(json.dumps(described, indent=2) if args.json else format_profiles(described))
    return 0


def _timeline(args: argparse.Namespace) -> int:
    import dataclasses

    from mockoss.profiles.releases import TIMELINES
    from mockoss.profiles.timeline import format_timeline

    timeline = TIMELINES.get(args.timeline)
    if timeline is None:
        print(f"mockoss: error: no timeline for {args.timeline!r}; timelines: {', '.join(TIMELINES)}", file=sys.stderr)
        return 2
    if args.json:
        data = {
            "server": timeline.server,
            "releases": [dataclasses.asdict(r) for r in timeline.ordered_releases],
            "aliases": dict(timeline.aliases),
            "changes": [dataclasses.asdict(c) for c in timeline.ordered_changes()],
        }
        print(json.dumps(data, indent=2))
    else:
        print(format_timeline(timeline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
