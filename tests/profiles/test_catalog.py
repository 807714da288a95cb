"""`mockoss profiles`: what each profile serves and which switches it takes."""

import json

from mockoss.cli import main
from mockoss.profiles.registry import PROFILES, get_profile


def test_json_lists_every_profile_with_endpoints_and_switch_defaults(capsys):
    assert main(["profiles", "--json"]) == 0
    described = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert list(described) == list(PROFILES)
    vllm = described["vllm"]
    assert vllm["endpoints"] == ["chat", "completions", "responses"]
    assert vllm["default_model"] == "openai/gpt-oss-20b"
    switches = {s["name"]: s for s in vllm["switches"]}
    harmony_error_status = switches["harmony_error_status"]
    assert harmony_error_status.pop("description").startswith("HTTP status of a ``HarmonyError``: 500 in current vLLM")
    assert harmony_error_status == {"name": "harmony_error_status", "default": 500, "choices": [400, 500]}
    assert switches["max_model_len"]["choices"] is None
    assert described["ollama"]["default_model"] == "gpt-oss:20b"
    assert "ollama.chat" in described["ollama"]["endpoints"]
    assert described["llamacpp"]["model_check"] is False


def test_every_listed_choice_is_accepted_by_the_profile(capsys):
    main(["profiles", "--json"])
    for entry in json.loads(capsys.readouterr().out):
        for switch in entry["switches"]:
            for choice in switch["choices"] or ():
                get_profile(entry["name"], {switch["name"]: choice})


def test_text_listing(capsys):
    main(["profiles", "vllm"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "vllm: endpoints chat, completions, responses; model openai/gpt-oss-20b"
    assert "  harmony_error_status = 500  (400 | 500)" in out
