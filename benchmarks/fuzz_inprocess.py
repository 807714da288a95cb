"""The in-process parts of ``bench_fuzz.py``: ``completions`` and ``requests``, answered by ``respond``.

Both parts answer each case with :meth:`MockServer.respond <mockoss.server.core.MockServer.respond>`
(no socket) and count it in a :class:`fuzz_checks.Tally`: ``completions`` plays random scripted
completions (:mod:`fuzz_cases`) through every profile, ``requests`` the mutated requests of
:mod:`fuzz_mutations`. What a crash is: ``bench_fuzz.py``'s docstring.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from fuzz_cases import random_completion, random_request, switch_header
from fuzz_checks import HUNG_S, Tally, documented, media_type, reply_problem
from fuzz_mutations import HTTP_SCENARIO, PATHS, endpoint_of, http_case, json_or_none

#: Valid ``X-Mockoss-Transport`` values the completions part sends with 1 in 10 requests.
TRANSPORTS = [
    "ttft_ms=0",
    "tokens_per_s=1000,jitter=0.5",
    "split_special=true",
    "truncate_after_frames=-1",
    "disconnect_after_frames=2",
    "malformed_at_frame=-2",
    "frames_per_write=3",
    "stall_after_frames=1,stall_ms=0",
]
#: Request log each in-process server keeps (bytes): the fuzz never reads it back.
LOG_BYTES = 1 << 20


def play(
    tally: Tally, server: Any, endpoint: str, raw: bytes, headers: dict[str, str], repro: dict[str, Any]
) -> tuple[Any, float] | None:
    """Answer one request in process with ``server.respond``, counted in ``tally``: ``(reply,
    seconds)``, or ``None`` when an exception escaped (counted as a crash)."""
    tally.cases += 1
    start = time.perf_counter()
    try:
        reply, _delivery = server.respond(endpoint, raw, headers)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        tally.statuses["exception"] += 1
        tally.crash(f"respond raised {type(exc).__name__}: {exc}", **repro)
        return None
    took = time.perf_counter() - start
    tally.statuses[reply.status] += 1
    if took > tally.extra.get("slowest_s", 0):
        tally.extra.update(slowest_s=round(took, 3), slowest=repro)
    return reply, took


def in_process_problem(profile: str, reply: Any, took: float, endpoint: str, request: Any) -> str | None:
    """Why a reply answered in process is a crash (:func:`fuzz_checks.reply_problem`, less what the
    profile documents), or a hang; ``None`` if it is neither."""
    problem = reply_problem(
        reply.status, media_type(reply), reply.body, list(reply.frames), endpoint, reply.abort is not None
    )
    if problem and documented(profile, problem, reply.status, reply.body, request):
        problem = None
    return f"hung: answered after {took:.1f} s" if took > HUNG_S else problem


def ollama_cut(server: Any, endpoint: str, body: dict[str, Any], headers: dict[str, str]) -> bool:
    """Whether an Ollama stream without its terminator is Ollama's own: a tool call that fails to
    decode ends the stream where the error line arrives (``error parsing tool call``; before PR
    #11861, switch ``tool_call_error=v0.11.3``, the native line ``{"error parsing tool call": …}``
    and non-streamed ``unexpected error format in response``; ``mockoss/profiles/ollama/
    openai_chat.py``, ``responses.py``, ``native.py``; ollama#11781). Checked, not assumed: the
    same request non-streamed must be that 500."""
    if not server.profile.startswith("ollama"):
        return False
    reply = server.handle(endpoint, json.dumps({**body, "stream": False}).encode(), headers)
    return reply.status == 500 and (
        b"error parsing tool call" in reply.body or b"unexpected error format in response" in reply.body
    )


def _servers() -> tuple[list[tuple[str, Any, list[dict[str, Any]]]], list[str]]:
    """One MockServer per profile (with its switch specs), and the oldest release of each timeline."""
    from mockoss.profiles.catalog import describe_profiles
    from mockoss.profiles.releases import TIMELINES
    from mockoss.server.core import MockServer

    servers = [
        (p["name"], MockServer(profile=p["name"], request_log_bytes=LOG_BYTES), p["switches"])
        for p in describe_profiles()
    ]
    releases = [f"{name}@{timeline.ordered_releases[0].name}" for name, timeline in TIMELINES.items()]
    return servers, releases


def part_completions(seed: int, seconds: float, limit: int | None) -> dict[str, Any]:
    """The ``completions`` part: random scripted completions, each played in process through every
    profile and one oldest release, until ``seconds`` pass (or ``limit`` completions are drawn).
    Returns the part's :meth:`fuzz_checks.Tally.summary` plus ``completions``, ``scenarios_refused``
    (refused at load: documented), ``profiles`` and ``releases``."""
    from mockoss.scenario.loader import ScenarioError, scenario_from_data
    from mockoss.server.core import MockServer

    tally = Tally("completions")
    servers, releases = _servers()
    switches = {name: specs for name, _, specs in servers}
    refused = completions = 0
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline and (limit is None or i < limit):
        rng = random.Random(f"{seed}/completions/{i}")
        data = {"steps": [{"completion": random_completion(rng)}]}
        i += 1
        try:
            scenario = scenario_from_data(data, name=f"fuzz-{i}", default_version=True)
        except ScenarioError:
            refused += 1
            continue
        except BaseException as exc:  # a loader bug: the file format promises a ScenarioError
            if isinstance(exc, KeyboardInterrupt):
                raise
            tally.crash(f"scenario load raised {type(exc).__name__}: {exc}", case=i - 1, scenario=data)
            continue
        completions += 1
        release = releases[i % len(releases)]
        chosen = [
            *servers,
            (release, MockServer(profile=release, request_log_bytes=LOG_BYTES), switches[release.split("@")[0]]),
        ]
        for name, server, specs in chosen:
            server.use_scenario(scenario)
            model = server.served_model_names[0]
            for endpoint in sorted(server._base_profile.endpoints):
                for stream in (False, True):
                    body = random_request(rng, endpoint, model, stream)
                    headers = switch_header(rng, specs)
                    if rng.random() < 0.1:  # how the reply travels: a Delivery, built by respond()
                        headers["x-mockoss-transport"] = rng.choice(TRANSPORTS)
                    raw = json.dumps(body).encode()
                    repro = {
                        "case": i - 1,
                        "profile": name,
                        "endpoint": endpoint,
                        "scenario": data,
                        "body": raw.decode("utf-8", "replace")[:800],
                        "headers": headers,
                    }
                    played = play(tally, server, endpoint, raw, headers, repro)
                    if played is None:
                        continue
                    problem = in_process_problem(name, *played, endpoint, body)
                    if problem and "without" in problem and ollama_cut(server, endpoint, body, headers):
                        problem, tally.extra["ollama_cut_streams"] = None, tally.extra.get("ollama_cut_streams", 0) + 1
                    if problem:
                        tally.crash(problem, **repro)
    tally.extra.update(
        completions=completions, scenarios_refused=refused, profiles=[s[0] for s in servers], releases=releases
    )
    return tally.summary()


def part_requests(seed: int, seconds: float) -> dict[str, Any]:
    """The http part's mutated requests (bodies and headers), answered in process by every profile
    in turn: ~100x the requests per second, for what does not need a socket (validation, the
    headers, the answer). Control-route cases and bodies over 2 MB are left to the http part."""
    from mockoss.profiles.catalog import describe_profiles
    from mockoss.server.core import MockServer

    tally = Tally("requests")
    described = [p for p in describe_profiles() if any(e in PATHS for e in p["endpoints"])]
    servers = {
        p["name"]: MockServer(scenario=HTTP_SCENARIO, profile=p["name"], request_log_bytes=LOG_BYTES) for p in described
    }
    deadline, i = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        profile = described[i % len(described)]
        name, endpoints = profile["name"], [e for e in profile["endpoints"] if e in PATHS]
        method, path, raw, headers = http_case(
            random.Random(f"{seed}/requests/{i}"), name, endpoints, profile["default_model"]
        )
        i += 1
        endpoint = endpoint_of(path)
        if method != "POST" or endpoint is None or len(raw) > 2_000_000:
            continue
        lowered = {k.lower(): v for k, v in headers.items()}
        repro = {
            "case": i - 1,
            "profile": name,
            "endpoint": endpoint,
            "headers": headers,
            "body": raw[:600].decode("utf-8", "backslashreplace"),
        }
        played = play(tally, servers[name], endpoint, raw, lowered, repro)
        if played is None:
            continue
        problem = in_process_problem(name, *played, endpoint, json_or_none(raw))
        if problem and "x-mockoss-transport" in lowered and not problem.startswith(("500", "hung")):
            problem = None  # the transport faults are applied over HTTP; in process the frames are whole
        if problem:
            tally.crash(problem, **repro)
    return tally.summary()
