"""The ``mockoss`` command line: runs the command the parser (:mod:`mockoss.cli_parser`) read.

``mockoss serve`` takes the flags ``vllm serve`` has where they mean the same thing
(``--host``, ``--port``, ``--served-model-name``, ``--seed``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from mockoss import __version__
from mockoss.cli_parser import build_parser

# The commands' modules (explain, eval, scenario, upstream, engines, the profile registry, the
# Harmony layer) are imported where they are used, after main() has paused the cyclic garbage
# collector for start-up (see main()), and only by the commands that use them: ``mockoss
# --version`` and ``--help`` import argparse and this package's parser alone (the eighteenth
# session's newcomer, item 7; ``tests/test_cli_newcomer18.py``).

__all__ = ["main"]


class _Terminated(Exception):
    """Raised in the main thread by SIGTERM while ``mockoss serve`` runs (:func:`_serve`)."""


def _unwind(signum: int, frame: Any) -> None:
    raise _Terminated


def _serve(args: argparse.Namespace) -> int:
    """``mockoss serve``, with SIGTERM unwinding the stack instead of ending the process at once.

    uvicorn stops on SIGTERM, restores the handler it found and raises the signal again
    (encode/uvicorn ``Server.capture_signals``); with the default action the process then died
    there, before ``_serve_until_stopped``'s ``finally``: a ``--engine`` subprocess, started in
    its own session, kept running (and its ``atexit`` stop never ran), and the recorder was not
    closed. Here that signal, or one during start-up (an engine can take minutes to load), raises
    :class:`_Terminated`; once the clean-up has run, the signal is raised again with the handler
    that was there before, so the exit status still says SIGTERM (``-15`` to a parent).
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _serve_until_stopped(args)  # signals reach the main thread only
    previous = signal.signal(signal.SIGTERM, _unwind)
    try:
        return _serve_until_stopped(args)
    except _Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    signal.raise_signal(signal.SIGTERM)
    return 128 + signal.SIGTERM  # a handler that returns (SIG_IGN, or one of the caller's)


def _serve_until_stopped(args: argparse.Namespace) -> int:
    if args.scenario is not None and (unknown := _unknown_scenario(args.scenario)):
        print(f"mockoss: error: {unknown}", file=sys.stderr)  # the words MockServer's load would raise
        return 2
    from mockoss.engines import EngineError
    from mockoss.engines import cli as engine_cli
    from mockoss.harmony.encoding import load_encoding
    from mockoss.profiles.registry import ProfileError
    from mockoss.scenario.loader import ScenarioError
    from mockoss.scenario.transport import TransportError
    from mockoss.server.core import MockServer
    from mockoss.server.run import base_url, bind, raise_open_files_limit, serve_forever
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
        with _release_warnings_on_stderr():  # vllm@0.99.0: one line, not a Python warning with its source line
            server = MockServer(
                scenario=args.scenario,
                profile=args.profile,
                switches=_serve_switches(args),
                served_model_names=args.served_model_name,
                seed=args.seed,
                request_log_limit=10_000,
                max_body_bytes=args.max_body_bytes,
                body_budget_bytes=args.body_budget_bytes,
                scenario_dirs=tuple(args.scenario_dir),
                transport={
                    k: v for k, v in (("ttft_ms", args.ttft_ms), ("tokens_per_s", args.tokens_per_s)) if v is not None
                }
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
    # Before the URL is printed: whoever reads it (a test, a supervisor) may open connections at
    # once. serve_forever raises it too (never lowering it: a second call changes nothing).
    raise_open_files_limit()
    if server.scenario:
        scenario = server.scenario.name
    elif server.upstream is not None:
        scenario = "none (requests go upstream)"
    else:
        scenario = "none (send X-Mockoss-Scenario)"
    switches = ", ".join(f"{k}={v}" for k, v in sorted(_serve_switches(args).items()))
    print(
        f"mockoss {__version__}: profile {args.profile}, scenario {scenario}"
        + (f", switches {switches}" if switches else ""),
        flush=True,
    )
    print(f"base URL: {base_url(sock)}/v1", flush=True)
    relayed = upstream is not None and upstream.mode == "pass"
    from mockoss.profiles.registry import get_profile

    print(root_line(base_url(sock), get_profile(server.profile, warn=False).endpoints, relayed=relayed), flush=True)
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
            admin_token=args.admin_token,
            allowed_hosts=tuple(args.allowed_host),
            access_log=args.access_log,
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


def _unknown_scenario(name: str) -> str | None:
    """Why ``--scenario NAME`` names no scenario (the loader's message), found before the server
    stack and the vocabulary load, or ``None``. A file or a shipped name is left to
    :class:`~mockoss.server.core.MockServer`, which loads it as before; for anything else (a
    mistyped name, a missing file, a directory) :func:`~mockoss.scenario.loader.load_scenario`
    says here what it would say there, before it reads any scenario. A
    mistyped name cost the whole start (4.7 s on a busy machine, the eighteenth session's
    newcomer, item 7) before that one line."""
    from importlib.resources import files
    from pathlib import Path

    if Path(name).is_file() or (files("mockoss.scenarios") / f"{name}.yaml").is_file():
        return None
    from mockoss.scenario.loader import ScenarioError, load_scenario

    try:
        load_scenario(name)  # raises for the name: a loaded scenario stays in its cache for MockServer
    except ScenarioError as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def _release_warnings_on_stderr() -> Iterator[None]:
    """Print each :class:`~mockoss.profiles.releases.ReleaseWarning` raised inside as one line when
    it is raised, ``mockoss: warning: vllm@0.99.0 is newer than 0.33.0, ...``, once per message;
    other warnings are shown as usual."""
    import warnings

    from mockoss.profiles.releases import ReleaseWarning

    seen: set[str] = set()
    with warnings.catch_warnings():  # restores the filters and showwarning on the way out
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if not issubclass(category, ReleaseWarning):
                shown(message, category, *args, **kwargs)
            elif str(message) not in seen:
                seen.add(str(message))
                print(f"mockoss: warning: {message}", file=sys.stderr, flush=True)

        warnings.showwarning = show
        warnings.simplefilter("always", ReleaseWarning)
        yield


def root_line(url: str, endpoints: Iterable[str], *, relayed: bool = False) -> str:
    """The banner's ``root URL:`` line: ``url`` and the native routes (paths outside ``/v1``) the
    server answers, by name, when it has any: the profile's ``endpoints``, or with ``relayed``
    (pass-through) every native route, which goes upstream. ``root URL: http://h:p`` alone for a
    profile with none (vLLM: the sixteenth session's newcomer, item 6, read "native APIs such as
    Ollama's /api/chat" under profile vllm, where ``/api/chat`` is a 404)."""
    from mockoss.endpoints import ENDPOINTS

    names = ENDPOINTS if relayed else endpoints
    native = [
        ENDPOINTS[name].path for name in ENDPOINTS if name in names and not ENDPOINTS[name].path.startswith("/v1/")
    ]
    if not native:
        return f"root URL: {url}"
    how = "native APIs relayed upstream" if relayed else "native APIs"
    return f"root URL: {url} ({how}: {', '.join('POST ' + path for path in native)})"


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
    try:
        return _main(argv, collecting)
    except BrokenPipeError:  # `mockoss explain … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if (message := _harmony_problem(exc)) is None:
            raise
        print(f"mockoss: error: {message}", file=sys.stderr)
        return 2


def _harmony_problem(exc: Exception) -> str | None:
    """The one line (no traceback) for the wrong Harmony library or a vocabulary that cannot be
    loaded, or ``None`` for any other ``exc``. Either can be raised only once
    :mod:`mockoss.harmony.encoding` is loaded, so a command that never loads it does not import it here."""
    encoding = sys.modules.get("mockoss.harmony.encoding")
    if encoding is None:
        return None
    if isinstance(exc, encoding.HarmonyLibraryError):  # the wrong Harmony library
        return str(exc)
    if isinstance(exc, encoding.VocabularyError):  # every command that tokenizes needs it
        return f"the o200k_base vocabulary cannot be loaded: {exc}"
    return None


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word, unless an option comes first (the top-level
    parser has only ``--help`` and ``--version``, so that is help, the version or an error)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def _main(argv: Sequence[str] | None, collecting: bool = True) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(_command(argv) or "")  # "": no subcommand named, none gets its arguments
    if not argv:
        return _no_arguments(parser)
    args = parser.parse_args(argv)
    if args.command == "serve" and args.stream_interval is not None and "stream_interval" in dict(args.switch):
        from mockoss.cli_parser import given_twice, subparser

        subparser(parser, "serve").error(f"--stream-interval and --switch: {given_twice('stream_interval')}")
    from mockoss.harmony.encoding import check_harmony_library  # every command loads the library (schema too)

    check_harmony_library()  # before a command parses or renders with the wrong library
    if args.command == "serve":
        return _serve(args)  # serve_forever turns the collector back on
    if collecting:
        gc.enable()
    with _release_warnings_on_stderr():  # explain --profile vllm@0.99.0, validate --profile ...
        return _command_run(args)


def _no_arguments(parser: argparse.ArgumentParser) -> int:
    """``mockoss`` alone: the help, on standard output, and exit code 2. The help, not argparse's
    ``the following arguments are required: command`` (the eighteenth session's newcomer, item
    8), as ``git`` and ``pip`` answer; 2 as before, argparse's code for a command line missing
    what it needs: nothing ran, and a script whose command word came out empty (``mockoss
    $CMD``) still fails instead of passing."""
    parser.print_help()
    return 2


def _command_run(args: argparse.Namespace) -> int:
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


def _profiles(args: argparse.Namespace) -> int:
    from mockoss import cli_profiles

    return cli_profiles.run(args)


def _serve_switches(args: argparse.Namespace) -> dict[str, Any]:
    switches = dict(args.switch)
    if getattr(args, "stream_interval", None) is not None:
        switches["stream_interval"] = args.stream_interval
    return switches


if __name__ == "__main__":
    raise SystemExit(main())
