"""What ``mockoss serve`` loads to start (issue 9: cold start and idle memory).

``benchmarks/bench_start.py`` measures the start (time to the first 200, idle RSS); these tests
guard the cuts behind its numbers without timing anything: a served mockoss imports the profile it
serves and not the others, nor libraries only some features use (Prometheus until the first
scrape, RE2 until a scenario has a pattern, the fault library, the proxy, the recorder and its
secret scanner, Faker, JSON Schema, the eval and explain commands, WebSocket libraries), and it
starts with the cyclic garbage collector paused.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import pytest

from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.lazy import LazyMapping
from mockoss.profiles.registry import PROFILES
from mockoss.profiles.releases import TIMELINES

#: Run ``mockoss serve`` in a fresh interpreter up to a built app (create_app, uvicorn's config)
#: and one answered request, then print the loaded modules instead of serving.
_SERVE_AND_LIST = textwrap.dedent(
    """
    import gc, json, sys
    import mockoss.server.run as run

    def serve_forever(server, sock, *, log_level, request_timeout_s, control):
        paused = not gc.isenabled()
        config = run._config(server, log_level, request_timeout_s, control)
        config.load()
        reply, _ = server.respond(sys.argv[2], json.dumps(
            {"model": server.served_model_names[0], "messages": [{"role": "user", "content": "hi"}]}).encode(), {})
        sock.close()
        from mockoss.harmony import encoding
        lengths = encoding._TOKEN_LENGTHS is not None
        print(json.dumps({"modules": sorted(sys.modules), "gc_paused": paused, "status": reply.status, "token_lengths": lengths}))

    run.serve_forever = serve_forever
    from mockoss.cli import main
    sys.exit(main(["serve", "--profile", sys.argv[1], "--scenario", "clean-answer", "--port", "0"]))
    """
)

#: Loaded by no served profile until a feature needs it.
HEAVY = (
    "prometheus_client",  # the first GET /mockoss/metrics (mockoss.server.control_metrics)
    "re2",  # a scenario with a match pattern (mockoss.scenario.pattern)
    "faker",  # templates and redaction that fake values
    "jsonschema",  # tool-call argument checks
    "mockoss.scenario.schema_keywords",  # its safe keywords, loaded with it (mockoss.scenario.schema_check)
    "detect_secrets",  # --record's secret scanner
    "httpx2",  # --upstream, eval, the remote fixture
    "mockoss.harmony.faults",  # a scenario step with a fault
    # openai-harmony 0.0.8's emulation and vLLM's error-skipping reader (mockoss.harmony.library.parse_with)
    "mockoss.harmony.emulate_0_0_8",
    "mockoss.harmony.header_0_0_8",
    "mockoss.harmony.skip_errors",
    "mockoss.upstream.proxy",  # --upstream
    "mockoss.scenario.json_schema",  # mockoss schema
    "fastapi",  # the first /mockoss request (mockoss.server.control_routes)
    "mockoss.server.control_routes",
    # --record's writer and what it pulls in (mockoss.upstream.Recorder is imported on first use)
    "mockoss.upstream.record",
    "mockoss.upstream.journal",
    "mockoss.upstream.scrub",
    "mockoss.upstream.redact",
    "mockoss.engines.vllm",  # --engine vllm
    "mockoss.eval.run",  # mockoss eval: its sender and report, and mockoss explain (mockoss.cli_parser.build_parser)
    "mockoss.eval.report",
    "mockoss.eval.command",
    "mockoss.explain",
    "mockoss.explain_rows",  # explain's rows (split from mockoss.explain)
    "websockets",  # a WebSocket handshake (mockoss.server.run._websocket_protocol)
    "wsproto",
    "mockoss.profiles.timeline",  # a profile at a release (vllm@0.26.0) or `mockoss profiles --timeline`
    "difflib",  # "did you mean" hints of errors (mockoss.suggest, mockoss.profiles.registry)
    "mockoss.suggest",
    "mockoss.scenario.schema_check",  # a scripted tool call's arguments against the request's schema (tool_check)
    "gzip",  # the first start on a machine unpacks the vocabulary (mockoss.harmony.encoding._unpack_into)
)


def _serve(profile: str, endpoint: str, tmp_path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _SERVE_AND_LIST, profile, endpoint], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _packages_of_other_profiles(served: str) -> set[str]:
    mine = PROFILES.module_of(served).split(".")[:3]  # type: ignore[attr-defined]
    others = {".".join(PROFILES.module_of(name).split(".")[:3]) for name in PROFILES}  # type: ignore[attr-defined]
    return others - {".".join(mine)}


#: The vLLM profile's Responses route, loaded with the first Responses request (mockoss.profiles.vllm).
VLLM_RESPONSES = {
    "mockoss.profiles.vllm.request_checks",
    "mockoss.profiles.vllm.responses",
    "mockoss.profiles.vllm.responses_cached",
    "mockoss.profiles.vllm.responses_echo",
    "mockoss.profiles.vllm.responses_plan",
    "mockoss.profiles.vllm.responses_stream",
}


@pytest.mark.parametrize(("profile", "endpoint", "unused_schemas"), [
    ("vllm", "chat", {"mockoss.schemas.ollama", "mockoss.schemas.completions", *VLLM_RESPONSES}),
    ("ollama", "ollama.chat", {"mockoss.schemas.chat", "mockoss.schemas.responses", "mockoss.schemas.completions"}),
])
def test_serve_loads_only_the_served_profile_and_no_optional_library(tmp_path, profile, endpoint, unused_schemas):
    started = _serve(profile, endpoint, tmp_path)
    assert started["status"] == 200
    modules = set(started["modules"])
    assert PROFILES.module_of(profile) in modules  # type: ignore[attr-defined]
    assert not modules & _packages_of_other_profiles(profile), "another profile was imported"
    assert not modules & set(HEAVY)
    assert not modules & unused_schemas, "request models or routes of endpoints not asked for were loaded"
    assert started["gc_paused"], "start-up runs with the cyclic collector paused (mockoss.cli.main)"
    assert not started["token_lengths"], "the per-token byte lengths (0.2 MB) wait for the first token_spans"


def test_serve_forever_turns_the_collector_back_on(monkeypatch):
    import uvicorn

    from mockoss.server import run
    from mockoss.server.core import MockServer

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    sock = run.bind()
    try:
        gc.disable()
        run.serve_forever(MockServer(scenario="clean-answer"), sock)
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
        sock.close()


def test_other_commands_run_with_the_collector_on(monkeypatch, capsys):
    from mockoss import cli

    seen = []
    monkeypatch.setattr(cli, "_profiles", lambda args: seen.append(gc.isenabled()) or 0)
    assert cli.main(["profiles"]) == 0
    assert seen == [True] and gc.isenabled()


def test_lazy_registry_lists_every_profile_and_builds_each_once():
    assert isinstance(PROFILES, LazyMapping) and isinstance(TIMELINES, LazyMapping)
    for name in PROFILES:
        profile = PROFILES[name]
        assert profile.name == name
        assert PROFILES[name] is profile
    for name in TIMELINES:
        assert TIMELINES[name].server == name
    # the dated vLLM names are the vLLM timeline's aliases, no more, no fewer
    assert {n for n in PROFILES if PROFILES.module_of(n) == "mockoss.profiles.vllm.variants"} == set(TIMELINES["vllm"].aliases)  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        PROFILES["vlm"]
    with pytest.raises(TypeError):
        PROFILES["x"] = PROFILES["vllm"]  # type: ignore[index]


def test_lazy_mapping_imports_on_first_lookup_only():
    table = LazyMapping({"ordered": "collections:OrderedDict", "given": 7, "pi": "math:pi", "entry": "types:MappingProxyType"})
    assert list(table) == ["ordered", "given", "pi", "entry"] and len(table) == 4 and "pi" in table
    assert table.loaded() == []
    assert table["given"] == 7 and table["pi"] == pytest.approx(3.14159, abs=1e-5)
    first = table["ordered"]
    assert type(first).__name__ == "OrderedDict" and table["ordered"] is first
    assert table.module_of("pi") == "math" and table.module_of("given") is None


def test_every_endpoint_schema_resolves():
    from pydantic import BaseModel

    for endpoint in ENDPOINTS.values():
        assert issubclass(endpoint.schema, BaseModel), endpoint.name
        assert endpoint.schema is endpoint.schema
    assert ENDPOINTS["chat"].schema is ENDPOINTS["lmstudio.chat"].schema


def test_metrics_exposition_is_prometheus_client_counters_and_gauges():
    """The lazily built exposition equals what Counter/Gauge objects give for the same traffic."""
    import re

    from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

    from mockoss.server.control_metrics import Metrics

    traffic = [("chat", 200, "clean", 0), ("chat", 200, None, 5), ("chat", 200, "", 0), ("probe", 404, None, 0), ("responses", 200, "x", 7)]
    reference = CollectorRegistry(auto_describe=True)
    requests = Counter("mockoss_requests", "Requests answered, by endpoint, status and scenario", ["endpoint", "status", "scenario"], registry=reference)
    frames = Counter("mockoss_stream_frames", "Stream frames (SSE events, NDJSON lines) sent, by endpoint", ["endpoint"], registry=reference)
    Gauge("mockoss_sessions", "Test-id sessions held", registry=reference).set_function(lambda: 3)
    metrics = Metrics(lambda: 3, None)
    metrics.render()  # a scrape before any request
    for endpoint, status, scenario, sent in traffic:
        requests.labels(endpoint, str(status), scenario or "").inc()
        if sent:
            frames.labels(endpoint).inc(sent)
        metrics.observe(endpoint, status, scenario, sent)
    created = re.compile(rb"(_created(?:\{[^}]*\})?) \S+")
    assert created.sub(rb"\1 T", metrics.render()[0]) == created.sub(rb"\1 T", generate_latest(reference))


def test_lazy_mapping_gives_every_thread_the_same_value():
    import threading

    table = LazyMapping({"ordered": "collections:OrderedDict"})
    start, seen = threading.Barrier(8), []

    def look() -> None:
        start.wait()
        seen.append(table["ordered"])

    threads = [threading.Thread(target=look) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and all(value is seen[0] for value in seen)
