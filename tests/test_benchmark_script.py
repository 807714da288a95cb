"""benchmarks/bench_http.py: its request builder and response parser, on in-memory bytes (no timing)."""

import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_http.py"
_spec = importlib.util.spec_from_file_location("bench_http", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

FRAMES = [b'data: {"i":%d}\n\n' % i for i in range(5)] + [b"data: [DONE]\n\n"]
SSE = b"".join(FRAMES)


def _chunked(parts):
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head + body


PLAIN = b'{"object":"chat.completion"}'
FIXED = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\ncontent-type: application/json\r\n\r\n%s" % (len(PLAIN), PLAIN)
ERROR = b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 5\r\n\r\noops!"
# A chunk boundary inside "\n\n", a chunk extension and a trailer.
SPLIT = _chunked([SSE[:15], SSE[15:16], SSE[16:]]).replace(b"0\r\n\r\n", b"0;ext=1\r\nX-Trailer: 1\r\n\r\n")
WIRE = FIXED + _chunked([b"".join(FRAMES[:3]), b"".join(FRAMES[3:])]) + ERROR + SPLIT
EXPECTED = [(200, len(PLAIN), 0), (200, len(SSE), 6), (500, 5, 0), (200, len(SSE), 6)]


@pytest.mark.parametrize("piece", [len(WIRE), 1, 2, 3, 7, 64])
def test_parser_decodes_pipelined_responses_split_anywhere(piece):
    parser = bench.ResponseParser()
    got = []
    for start in range(0, len(WIRE), piece):
        got += parser.feed(WIRE[start : start + piece])
    assert got == EXPECTED
    assert parser.feed(b"") == []


def test_parser_waits_for_a_whole_response():
    parser = bench.ResponseParser()
    assert parser.feed(FIXED[:-1]) == []
    assert parser.feed(FIXED[-1:]) == [(200, len(PLAIN), 0)]


def test_request_bytes():
    body = bench.request_body("chat", stream=True)
    assert json.loads(body)["stream"] is True and bench.STREAM_MARK in body
    assert bench.STREAM_MARK not in bench.request_body("chat")
    assert "input" in json.loads(bench.request_body("responses"))
    raw = bench.build_request("/v1/chat/completions", "127.0.0.1:1", body)
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"Content-Length: %d" % len(body) in head and rest == body


def test_split_sse_keeps_frames_whole():
    assert bench.split_sse(SSE) == FRAMES
    assert bench.split_sse(SSE + b"data: x") == [*FRAMES, b"data: x"]


def test_long_scenario_is_valid_json_yaml():
    doc = json.loads(bench.long_scenario(50))
    assert len(doc["steps"][0]["completion"]["messages"][1]["content"].split()) == 50


def test_unique_bodies_are_new_conversation_turns():
    bodies = [bench.unique_body("chat", n) for n in range(3)]
    assert len(set(bodies)) == 3
    first = json.loads(bodies[0])["messages"]
    assert [m["role"] for m in first] == ["user", "assistant", "user"]
    assert json.loads(bench.unique_body("responses", 1))["input"][-1]["type"] == "message"


def test_profile_cases_cover_what_each_profile_serves():
    """``--profiles``: a long answer per profile, only on the endpoints the profile serves, each
    case's server keyed by its profile; an unknown name stops the run before any server starts."""
    from mockoss.profiles.registry import PROFILES

    cases = bench.profile_cases("all")
    names = {c[0] for c in cases}
    for profile, spec in PROFILES.items():
        assert (f"{profile} chat/s 10k" in names) == ("chat" in spec.endpoints)
        assert (f"{profile} responses/s 10k" in names) == ("responses" in spec.endpoints)
        assert (f"{profile} responses 10k" in names) == ("responses" in spec.endpoints)
    assert "gptoss-reference chat/s 10k" not in names  # Responses only
    assert {c[1] for c in bench.profile_cases("trtllm, sglang")} == {"long10000@trtllm", "long10000@sglang"}
    with pytest.raises(SystemExit, match="unknown profile"):
        bench.profile_cases("vllm,nosuch")


def test_baseline_case_header_is_sent_with_the_request():
    raw = bench.build_request("/v1/chat/completions", "h:1", b"{}", {"X-Bench-Case": "chat unique"})
    head = raw.partition(b"\r\n\r\n")[0]
    assert b"\r\nX-Bench-Case: chat unique\r\n" in head and head.endswith(b"Content-Length: 2")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, _PATH.with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_prompt_benchmark_traffic_is_answered_and_agent_turns_share_their_prefix():
    from mockoss.server.core import MockServer

    prompt = _load("bench_prompt")
    server = MockServer("clean-answer")
    for name, _, _, make, body, _, _ in prompt.cases():
        if len(body) > 20_000 and name != "agent 50+20":
            continue  # the big ones cost time, not coverage
        assert make(1) != make(2), name  # every request new
        server.use_scenario(server.scenario)
        assert server.handle("chat", make(3), {}).status == 200, name
    agent = prompt.agent(48, prompt.TOOLS)
    first, second = json.loads(agent(1)), json.loads(agent(2))
    assert len(first["messages"]) == 50 and len(first["tools"]) == 20
    assert first["messages"][:48] == second["messages"][:48] and first["messages"][48:] != second["messages"][48:]


def test_the_first_request_benchmark_runs_in_quick_form():
    first = _load("bench_first_request")
    ms, tokens = first.first_request_ms(50)
    assert ms > 0 and 50 <= tokens <= 80


def test_bench_pacing_runs_end_to_end():
    """benchmarks/bench_pacing.py once failed with AttributeError after its helpers moved to
    benchlib; this runs it small (10 frames, a wide tolerance: no timing is asserted here)."""
    import subprocess
    import sys

    script = _PATH.with_name("bench_pacing.py")
    argv = [sys.executable, str(script), "--tokens", "10", "--tokens-per-s", "100", "--ttft-ms", "50", "--connections", "2", "--tolerance", "100"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=script.parent.parent, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "paced stream alone" in done.stdout and "result: PASS" in done.stdout


def test_bench_fuzz_quickest_form_reports_no_crash():
    """benchmarks/bench_fuzz.py in its smallest form (~13 s): every part runs cases and none is a
    crash (issue 9: "unchanged: 0 crashes under the fuzz and soak"); the figures are in
    benchmarks/README.md."""
    import subprocess
    import sys

    script = _PATH.with_name("bench_fuzz.py")
    argv = [sys.executable, str(script), "--seconds", "2", "--soak-seconds", "2", "--clients", "20", "--streams", "50",
            "--profiles", "vllm,ollama", "--json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=script.parent.parent, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout)
    found = {part: result[part]["crash_kinds"] for part in ("completions", "requests", "http")}
    found["soak"] = {"soak": result["soak"]["soak"]["samples"], "streams": result["soak"]["streams"]["samples"]}
    assert result["total_crashes"] == 0, json.dumps(found)[:3000]
    assert result["completions"]["cases"] > 100 and result["requests"]["cases"] > 100 and result["http"]["cases"] > 20
    assert result["soak"]["soak"]["requests"] > 0 and result["soak"]["streams"]["streams"] == 50


def test_bench_fuzz_counts_an_internal_error_and_a_broken_stream_as_crashes(monkeypatch):
    """The checks can fail: a profile that raises is counted (its answer is mockoss's internal-error
    500), and so are a stream without its terminator and a frame that is not JSON."""
    fuzz = _load("bench_fuzz")  # puts benchmarks/ on sys.path for its helpers, as when run
    checks = _load("fuzz_checks")
    from mockoss.profiles.openai import OpenAIProfile

    def broken(self, completion, request, ctx):
        raise RuntimeError("injected")

    monkeypatch.setattr(OpenAIProfile, "chat", broken)
    result = fuzz.part_completions(5, 30.0, 3)
    assert result["crashes"] > 0
    for kind in result["crash_kinds"]:
        assert kind.startswith("openai chat: N: mockoss internal error") and "RuntimeError: injected" in kind, kind
    sse = "text/event-stream"
    assert checks.reply_problem(200, sse, b"", [b'data: {"a":1}\n\n'], "chat", False).startswith("stream without data: [DONE]")
    assert checks.reply_problem(200, sse, b"", [b"data: {'a':1}\n\n", b"data: [DONE]\n\n"], "chat", False).startswith("SSE data not JSON")
    assert checks.reply_problem(200, sse, b"", [b'event: response.created\ndata: {"a":1}\n\n'], "responses", False)
    assert checks.reply_problem(200, "application/json", b'{"a":NaN}', [], "chat", False).startswith("JSON body not JSON")
    assert checks.reply_problem(200, "application/x-ndjson", b"", [b'{"done":false}\n'], "ollama.chat", False)
    assert checks.reply_problem(200, sse, b"", [b'data: {"a":1}\n\n'], "chat", True) is None  # a scripted drop
    done = [b'data: {"a":1}\n\n', b"data: [DONE]\n\n"]
    assert checks.reply_problem(200, sse, b"", done, "chat", False) is None
