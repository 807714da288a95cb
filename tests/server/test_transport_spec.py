"""TransportSpec: the scenario field, the header, the layers, and the errors users see."""

import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.scenario.transport import TransportError, TransportSpec

FINAL = {"messages": [{"channel": "final", "content": "Hi."}]}


def test_header_values_are_read_as_numbers_booleans_and_words():
    spec = TransportSpec.from_header("ttft_ms=300, tokens_per_s=50,jitter=0.25,split_special=true,stall_ms=forever")
    assert (spec.ttft_ms, spec.tokens_per_s, spec.jitter, spec.split_special, spec.stall_ms) == (
        300.0,
        50.0,
        0.25,
        True,
        "forever",
    )
    assert spec.model_fields_set == {"ttft_ms", "tokens_per_s", "jitter", "split_special", "stall_ms"}
    assert TransportSpec.from_header(r"malformed_text=data: oops\n\n").malformed_text == "data: oops\n\n"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "ttft_ms=abc",
            "X-Mockoss-Transport: ttft_ms: Input should be a valid number, unable to parse string as a number (got 'abc')",
        ),
        ("ttft_ms", "X-Mockoss-Transport: expected name=value, got 'ttft_ms'"),
        ("ttft_ms=1,ttft_ms=2", "X-Mockoss-Transport: ttft_ms is given twice"),
        ("tokens_per_s=0", "X-Mockoss-Transport: tokens_per_s: Input should be greater than 0 (got '0')"),
        (
            "stall_ms=soon",
            "X-Mockoss-Transport: stall_ms: Value error, expected a number of ms from 0 to 600000, or 'forever' (got 'soon')",
        ),
        ("jitter=1.5", "X-Mockoss-Transport: jitter: Input should be less than or equal to 1 (got '1.5')"),
        ("ttft_ms=nan", "X-Mockoss-Transport: ttft_ms: Input should be a finite number (got 'nan')"),
    ],
)
def test_header_errors_name_the_field_and_the_value(header, message):
    with pytest.raises(TransportError) as caught:
        TransportSpec.from_header(header)
    assert str(caught.value) == message


def test_unknown_header_field_lists_the_fields():
    with pytest.raises(
        TransportError, match=r"^X-Mockoss-Transport: ttft: unknown field \(did you mean .ttft_ms.\?\); the fields are ttft_ms, tokens_per_s, jitter"
    ):
        TransportSpec.from_header("ttft=3")


def test_layers_override_only_the_fields_they_set():
    server = TransportSpec(ttft_ms=300, tokens_per_s=50)
    step = TransportSpec(disconnect_after_frames=4)
    header = TransportSpec(tokens_per_s=10)
    merged = TransportSpec.layered(server, step, None, header)
    assert (merged.ttft_ms, merged.tokens_per_s, merged.disconnect_after_frames) == (300.0, 10.0, 4)
    assert merged.model_fields_set == {"ttft_ms", "tokens_per_s", "disconnect_after_frames"}
    assert TransportSpec.layered(None, step, None) is step
    assert TransportSpec.layered(None, None) is None


def test_from_data_accepts_mappings_and_specs():
    spec = TransportSpec(ttft_ms=1)
    assert TransportSpec.from_data(spec) is spec
    assert TransportSpec.from_data({"tokens_per_s": 5}).tokens_per_s == 5.0
    with pytest.raises(
        TransportError, match=r"^MockServer: frames_per_write: Input should be greater than or equal to 1 \(got 0\)$"
    ):
        TransportSpec.from_data({"frames_per_write": 0}, where="MockServer")


def test_step_transport_is_compiled_onto_the_step():
    scenario = scenario_from_data(
        {
            "steps": [
                {"completion": FINAL, "transport": {"ttft_ms": 300, "truncate_after_frames": -1}},
                {"completion": FINAL},
            ]
        },
        name="t",
        default_version=True,
    )
    assert scenario.steps[0].transport == TransportSpec(ttft_ms=300, truncate_after_frames=-1)
    assert scenario.steps[1].transport is None


def test_error_steps_take_a_transport_too():
    scenario = scenario_from_data(
        {"steps": [{"error": {"status": 429, "retry_after": 2}, "transport": {"ttft_ms": 50}}]},
        name="t",
        default_version=True,
    )
    assert scenario.steps[0].transport.ttft_ms == 50.0


def test_bad_transport_in_a_file_names_file_line_and_field(tmp_path):
    path = tmp_path / "slow.yaml"
    path.write_text(
        "version: 1\n"
        "steps:\n"
        "  - completion:\n"
        "      raw: '<|channel|>final<|message|>Hi.<|return|>'\n"
        "    transport:\n"
        "      ttft_ms: 300\n"
        "      tokens_per_sec: 50\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}:7: steps[0].transport.tokens_per_sec: unknown field (did you mean 'tokens_per_s'?)"
