"""The ``mockoss serve`` flags for a real engine behind the scenarios (``--engine vllm``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from mockoss.upstream.config import UpstreamError

if TYPE_CHECKING:
    from mockoss.engines.vllm.launcher import VllmEngine

__all__ = ["ENGINES", "add_arguments", "start"]

#: Engines ``--engine`` accepts.
ENGINES = ("vllm",)


def add_arguments(serve: argparse.ArgumentParser) -> None:
    """Add ``--engine``, ``--vllm-python``, ``--vllm-src`` and ``--vllm-arg`` to ``serve``."""
    group = serve.add_argument_group("real engine (README: Real vLLM behind mockoss)")
    group.add_argument(
        "--engine",
        choices=ENGINES,
        help="answer with real vLLM running a scripted gpt-oss: the scenario picks each completion, vLLM's own code surfaces it",
    )
    group.add_argument("--vllm-python", metavar="PATH", help="Python that runs vLLM (default: $MOCKOSS_VLLM_PYTHON, else this one)")
    group.add_argument("--vllm-src", metavar="DIR", help="a vLLM source checkout to put first on vLLM's PYTHONPATH")
    group.add_argument(
        "--vllm-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass a flag to vLLM, e.g. --vllm-arg=--reasoning-parser=openai_gptoss (repeatable; later flags win)",
    )


def start(args: argparse.Namespace, served_model_names: list[str] | None) -> VllmEngine | None:
    """Start the engine ``args`` ask for (``None`` without ``--engine``), printing progress.

    Raises:
        UpstreamError: ``--vllm-*`` without ``--engine``, or ``--engine`` with ``--upstream``,
            ``--record`` or a profile other than ``vllm``.
        EngineError: vLLM is missing or did not start.
    """
    if args.engine is None:
        given = [flag for flag, on in (("--vllm-python", args.vllm_python), ("--vllm-src", args.vllm_src), ("--vllm-arg", args.vllm_arg)) if on]
        if given:
            raise UpstreamError(f"{', '.join(given)} needs --engine vllm")
        return None
    clashes = [flag for flag, on in (("--upstream", args.upstream), ("--record", args.record)) if on]
    if args.profile.partition("@")[0] != "vllm":  # vllm or a dated release: its error shapes
        clashes.append(f"--profile {args.profile}")
    if clashes:
        raise UpstreamError(f"--engine vllm cannot be combined with {', '.join(clashes)}")
    from mockoss.engines.vllm.launcher import DEFAULT_MODEL, VllmEngine

    engine = VllmEngine(
        python=args.vllm_python, vllm_src=args.vllm_src, extra_args=args.vllm_arg, models=served_model_names or (DEFAULT_MODEL,),
        keep_log=True,  # its path is printed below: the user may read it after the server stops
    )
    version = engine.check()
    print(f"starting vLLM {version} with the scripted model (about a minute); log: {engine.log_path}", file=sys.stderr, flush=True)
    engine.start()
    print(f"vLLM ready at {engine.url} after {engine.start_seconds:.0f} s", file=sys.stderr, flush=True)
    return engine
