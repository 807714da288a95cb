"""Request bodies must render as the Harmony prompt vLLM builds for gpt-oss (see mockoss.harmony.prompt)."""

import copy

import pytest

from mockoss.harmony import load_encoding
from mockoss.harmony.prompt import render_chat_prompt, render_responses_prompt

START_ASSISTANT = [200006, 173781]  # <|start|>assistant

SYSTEM_HEAD = (
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Knowledge cutoff: 2024-06\n"
    "Current date: 2026-01-01\n\n"
)
CHANNELS = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
FUNCTIONS_LINE = "\nCalls to these tools must go to the commentary channel: 'functions'."


def system(effort="medium", *, functions=False):
    return f"{SYSTEM_HEAD}Reasoning: {effort}\n\n{CHANNELS}{FUNCTIONS_LINE if functions else ''}<|end|>"


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["location"],
}
CHAT_TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Get the weather.", "parameters": WEATHER_SCHEMA},
    }
]
RESPONSES_TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Get the weather.", "parameters": WEATHER_SCHEMA}
]
FUNCTIONS_NAMESPACE = (
    "# Tools\n\n## functions\n\nnamespace functions {\n\n// Get the weather.\ntype get_weather = (_: {\n"
    'location: string,\nunit?: "c" | "f",\n}) => any;\n\n} // namespace functions'
)
# vLLM 0.32/0.33 render the prompt with oss-harmony 0.0.11 (their declared dependency), which puts
# the recipient after the channel and renders the content type as <|constrain|>json, then rewrite each
# assistant tool-call header back to the shape openai-harmony 0.0.8 and the gpt-oss chat template
# write, "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
# (render_for_completion → _use_legacy_tool_call_headers,
# vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/parser/harmony_utils.py; 2 tokens fewer).
CALL = '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"location":"Paris"}<|call|>'

RESULT = "<|start|>functions.get_weather<|channel|>commentary to=assistant<|message|>18C, sunny<|end|>"


def text(tokens):
    assert isinstance(tokens, list) and all(type(t) is int for t in tokens)
    assert tokens[-2:] == START_ASSISTANT
    return load_encoding().decode_utf8(tokens)


def chat(**body):
    return text(render_chat_prompt(body))


def responses(**body):
    return text(render_responses_prompt(body))


# --- exact counts for tiny inputs ---------------------------------------------------------------


def test_a_single_user_message_renders_exactly_and_counts_68_tokens():
    tokens = render_chat_prompt({"messages": [{"role": "user", "content": "Hi"}]})
    assert text(tokens) == system() + "<|start|>user<|message|>Hi<|end|><|start|>assistant"
    assert len(tokens) == 68


def test_a_string_input_renders_like_the_same_chat_message():
    tokens = render_responses_prompt({"input": "Hi"})
    assert tokens == render_chat_prompt({"messages": [{"role": "user", "content": "Hi"}]})
    assert len(tokens) == 68


def test_an_empty_body_is_the_system_message_alone():
    tokens = render_chat_prompt({})
    assert text(tokens) == system() + "<|start|>assistant"
    assert len(tokens) == 63


def test_the_conversation_start_date_is_a_parameter():
    rendered = text(render_chat_prompt({}, conversation_start_date="2025-08-05"))
    assert "Current date: 2025-08-05\n" in rendered
    rendered = text(render_responses_prompt({"input": "x"}, conversation_start_date="2025-08-05"))
    assert "Current date: 2025-08-05\n" in rendered


# --- system message: reasoning effort ------------------------------------------------------------


@pytest.mark.parametrize(("effort", "expected"), [("low", "low"), ("medium", "medium"), ("high", "high"), (None, "medium")])
def test_reasoning_effort_sets_the_reasoning_line(effort, expected):
    assert chat(messages=[], reasoning_effort=effort).startswith(system(expected))
    assert responses(input="x", reasoning={"effort": effort}).startswith(system(expected))


@pytest.mark.parametrize("effort", ["none", "minimal", "xhigh", "HIGH", 3, ["high"]])
def test_reasoning_efforts_vllm_rejects_render_as_the_default(effort):
    assert chat(messages=[], reasoning_effort=effort).startswith(system("medium"))
    assert responses(input="x", reasoning={"effort": effort}).startswith(system("medium"))


def test_a_null_reasoning_object_renders_the_default():
    assert responses(input="x", reasoning=None).startswith(system("medium"))


# --- chat: instructions and tools ----------------------------------------------------------------


def test_without_instructions_or_tools_there_is_no_developer_message():
    rendered = chat(messages=[{"role": "user", "content": "Hi"}], tools=None)
    assert "<|start|>developer" not in rendered


def test_a_leading_system_message_becomes_the_developer_instructions():
    rendered = chat(messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    assert rendered == (
        system()
        + "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"
        + "<|start|>user<|message|>Hi<|end|><|start|>assistant"
    )


@pytest.mark.parametrize("role", ["system", "developer"])
def test_a_leading_instruction_message_with_parts_is_flattened(role):
    content = [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]
    rendered = chat(messages=[{"role": role, "content": content}, {"role": "user", "content": "Hi"}])
    assert "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|><|start|>user" in rendered


def test_later_system_messages_become_extra_developer_messages():
    rendered = chat(
        messages=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Bye"},
        ]
    )
    assert rendered == (
        system()
        + "<|start|>user<|message|>Hi<|end|>"
        + "<|start|>assistant<|channel|>final<|message|>Hello.<|end|>"
        + "<|start|>developer<|message|># Instructions\n\nAnswer in French.<|end|>"
        + "<|start|>user<|message|>Bye<|end|><|start|>assistant"
    )


def test_tools_render_the_functions_namespace_in_the_developer_message():
    rendered = chat(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}], tools=CHAT_TOOLS
    )
    assert rendered == (
        system(functions=True)
        + "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n"
        + FUNCTIONS_NAMESPACE
        + "<|end|><|start|>user<|message|>Weather?<|end|><|start|>assistant"
    )


def test_tools_without_instructions_have_no_instructions_section():
    rendered = chat(messages=[{"role": "user", "content": "Weather?"}], tools=CHAT_TOOLS)
    assert "<|start|>developer<|message|>" + FUNCTIONS_NAMESPACE + "<|end|>" in rendered


def test_tool_choice_none_still_renders_the_tools_unless_vllm_is_told_to_exclude_them():
    body = {"messages": [{"role": "user", "content": "Weather?"}], "tools": CHAT_TOOLS, "tool_choice": "none"}
    assert "namespace functions {" in text(render_chat_prompt(body))
    excluded = text(render_chat_prompt(body, exclude_tools_when_tool_choice_none=True))
    assert excluded == system() + "<|start|>user<|message|>Weather?<|end|><|start|>assistant"


def test_a_tool_without_description_or_parameters_renders_as_a_no_argument_function():
    rendered = chat(messages=[], tools=[{"type": "function", "function": {"name": "now"}}])
    assert "namespace functions {\n\ntype now = () => any;\n\n} // namespace functions" in rendered


# --- chat: the conversation -----------------------------------------------------------------------


def tool_turn(**assistant):
    return [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'}}
            ],
            **assistant,
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, sunny"},
    ]


def test_tool_calls_and_results_render_on_the_commentary_channel():
    rendered = chat(messages=tool_turn(), tools=CHAT_TOOLS)
    assert rendered.endswith(
        "<|start|>user<|message|>Weather in Paris?<|end|>" + CALL + RESULT + "<|start|>assistant"
    )


def test_an_assistant_preamble_reasoning_and_call_render_in_vllms_order():
    rendered = chat(messages=tool_turn(content="Checking.", reasoning="Need the tool."))
    assert (
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Need the tool.<|end|>" + CALL + RESULT
    ) in rendered


def test_reasoning_content_is_read_like_reasoning():
    assert chat(messages=tool_turn(reasoning_content="Need the tool.")) == chat(
        messages=tool_turn(reasoning="Need the tool.")
    )


def test_a_tool_result_for_an_unknown_call_id_has_an_empty_tool_name():
    rendered = chat(messages=[{"role": "tool", "tool_call_id": "nope", "content": "x"}])
    assert "<|start|>functions.<|channel|>commentary to=assistant<|message|>x<|end|>" in rendered


def test_parallel_tool_calls_render_one_message_each_and_results_find_their_names():
    messages = [
        {"role": "user", "content": "Paris and Rome?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'}},
                {"id": "b", "function": {"name": "get_time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": "noon"},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "18C, sunny"}]},
    ]
    assert chat(messages=messages).endswith(
        CALL
        + "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>"
        + "<|start|>functions.get_time<|channel|>commentary to=assistant<|message|>noon<|end|>"
        + RESULT
        + "<|start|>assistant"
    )


def test_reasoning_before_the_last_final_answer_is_dropped_and_later_reasoning_kept():
    messages = [
        {"role": "user", "content": "1"},
        {"role": "assistant", "reasoning": "old thought", "content": "one"},
        {"role": "user", "content": "2"},
        *tool_turn(reasoning="new thought")[1:],
    ]
    rendered = chat(messages=messages)
    assert "old thought" not in rendered
    assert "<|start|>assistant<|channel|>final<|message|>one<|end|>" in rendered
    assert "<|start|>assistant<|channel|>analysis<|message|>new thought<|end|>" + CALL in rendered


def test_content_parts_keep_their_text_and_skip_images():
    rendered = chat(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is "},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "text", "text": "this?"},
                ],
            }
        ]
    )
    assert "<|start|>user<|message|>What is this?<|end|>" in rendered


def test_assistant_messages_without_text_are_left_out():
    rendered = chat(
        messages=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": None},
            {"role": "assistant", "content": ""},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]},
        ]
    )
    assert rendered == system() + "<|start|>user<|message|>Hi<|end|><|start|>assistant"


# --- /v1/responses ----------------------------------------------------------------------------------


def test_instructions_and_function_tools_render_in_the_developer_message():
    rendered = responses(instructions="Be brief.", input="Weather?", tools=RESPONSES_TOOLS)
    assert rendered == (
        system(functions=True)
        + "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n"
        + FUNCTIONS_NAMESPACE
        + "<|end|><|start|>user<|message|>Weather?<|end|><|start|>assistant"
    )


def test_a_leading_system_input_message_stands_in_for_missing_instructions():
    rendered = responses(
        input=[
            {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Be brief."}]},
            {"role": "user", "content": "Hi"},
        ]
    )
    assert rendered == (
        system()
        + "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"
        + "<|start|>user<|message|>Hi<|end|><|start|>assistant"
    )


def test_instructions_win_and_a_developer_input_message_becomes_its_own_developer_message():
    rendered = responses(instructions="Be brief.", input=[{"role": "developer", "content": "Use metric units."}])
    assert rendered == (
        system()
        + "<|start|>developer<|message|># Instructions\n\nBe brief.<|end|>"
        + "<|start|>developer<|message|># Instructions\n\nUse metric units.<|end|><|start|>assistant"
    )


def test_builtin_tools_render_in_the_system_message():
    rendered = text(
        render_responses_prompt(
            {"input": "Search.", "tools": [{"type": "web_search_preview"}, {"type": "code_interpreter"}]},
            builtin_tools=True,
        )
    )
    head, _, rest = rendered.partition("<|end|>")
    assert "Reasoning: medium\n\n# Tools\n\n## browser\n" in head
    assert "namespace browser {" in head and "type search = (_: {" in head
    assert "## python\n" in head
    assert head.index("## browser") < head.index("## python") < head.index(CHANNELS)
    assert FUNCTIONS_LINE not in head
    assert "<|start|>developer" not in rest  # built-ins alone make no developer message


def test_builtin_tools_are_not_rendered_without_a_tool_server():
    body = {"input": "Search.", "tools": [{"type": "web_search_preview"}, {"type": "container"}]}
    # The default is vLLM without a tool server.
    assert text(render_responses_prompt(body)) == text(render_responses_prompt({"input": "Search."}))
    # The demo tool server has no description for container either.
    assert text(render_responses_prompt({"input": "x", "tools": [{"type": "container"}]}, builtin_tools=True)) == text(
        render_responses_prompt({"input": "x"})
    )


def test_function_and_builtin_tools_together():
    rendered = text(
        render_responses_prompt({"input": "x", "tools": [{"type": "web_search_preview"}, *RESPONSES_TOOLS]}, builtin_tools=True)
    )
    system_part = rendered.partition("<|end|>")[0]
    assert "namespace browser {" in system_part and system_part.endswith(FUNCTIONS_LINE)
    assert "<|start|>developer<|message|>" + FUNCTIONS_NAMESPACE + "<|end|>" in rendered


def response_items(reasoning=True):
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"location":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "18C, sunny"},
    ]
    if reasoning:
        items.insert(
            1,
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Need the tool."}]},
        )
    return items


def test_function_calls_outputs_and_reasoning_items_render_like_chat():
    rendered = responses(input=response_items(), tools=RESPONSES_TOOLS)
    assert rendered.endswith(
        "<|start|>user<|message|>Weather in Paris?<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Need the tool.<|end|>" + CALL + RESULT + "<|start|>assistant"
    )


def test_chat_and_responses_render_the_same_conversation_identically():
    # vLLM's own parity test (tests/entrypoints/openai/parser/test_harmony_render_parity.py) asserts this.
    chat_body = {
        "messages": [{"role": "system", "content": "Be brief."}, *tool_turn(reasoning="Need the tool.")],
        "tools": CHAT_TOOLS,
        "reasoning_effort": "low",
    }
    responses_body = {
        "instructions": "Be brief.",
        "input": response_items(),
        "tools": RESPONSES_TOOLS,
        "reasoning": {"effort": "low"},
    }
    assert render_chat_prompt(chat_body) == render_responses_prompt(responses_body)


def test_reasoning_items_without_content_are_skipped():
    items = response_items(reasoning=False)
    with_summary_only = [items[0], {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "s"}]}, *items[1:]]
    assert render_responses_prompt({"input": with_summary_only}) == render_responses_prompt({"input": items})


def test_earlier_answers_are_final_messages_and_openai_harmony_drops_the_reasoning_before_them():
    # vLLM's Responses path leaves analysis to openai-harmony, which drops analysis messages before
    # the first final message when the last assistant message is a final one.
    rendered = responses(
        input=[
            {"role": "user", "content": "1"},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "a"}, {"type": "reasoning_text", "text": "b"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "one", "annotations": []}]},
            {"role": "user", "content": "2"},
        ]
    )
    assert rendered.endswith(
        "<|start|>user<|message|>1<|end|>"
        "<|start|>assistant<|channel|>final<|message|>one<|end|>"
        "<|start|>user<|message|>2<|end|><|start|>assistant"
    )


def test_reasoning_items_after_the_last_answer_are_kept_and_joined_by_newlines():
    rendered = responses(
        input=[
            {"role": "user", "content": "1"},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "a"}, {"type": "reasoning_text", "text": "b"}]},
            *response_items(reasoning=False)[1:],
        ]
    )
    assert "<|start|>assistant<|channel|>analysis<|message|>a\nb<|end|>" + CALL + RESULT in rendered


def test_an_output_for_an_unknown_call_id_has_an_empty_tool_name():
    rendered = responses(input=[{"type": "function_call_output", "call_id": "nope", "output": "x"}])
    assert "<|start|>functions.<|channel|>commentary to=assistant<|message|>x<|end|>" in rendered


# --- odd but valid input never raises -------------------------------------------------------------

ODD_CHAT_BODIES = [
    {"messages": None},
    {"messages": "not a list"},
    {"messages": [None, 3, "x", {"role": "function", "name": "f", "content": "x"}, {"role": "bogus"}, {}]},
    {"messages": [{"role": "user"}, {"role": "user", "content": None}, {"role": "user", "content": []}]},
    {"messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}, "bare string", 7, None]}]},
    {"messages": [{"role": "user", "content": {"unexpected": "object"}}]},
    {"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}]},
    {"messages": [{"role": "assistant", "tool_calls": [{"id": ["x"], "function": {"name": None, "arguments": {"a": 1}}}]}]},
    {"messages": [{"role": "assistant", "tool_calls": None, "content": [{"type": "text", "text": 5}], "reasoning": 1}]},
    {"messages": [{"role": "tool", "tool_call_id": {"x": 1}, "content": None}]},
    {"messages": [{"role": "system", "content": None}, {"role": "developer", "content": []}]},
    {"messages": [{"role": "user", "content": "lone \ud800 surrogate"}]},
    {"tools": "nope", "messages": []},
    {"tools": [{"type": ["function"]}, {"type": {"k": 1}, "function": {"name": "f"}}], "tool_choice": {"x": 1}},
    {"tools": [None, {"type": "custom", "custom": {"name": "x"}}, {"type": "function"}, {"function": {"name": 5}}]},
    {"tools": [{"type": "function", "function": {"name": "f", "parameters": ["not", "a", "dict"]}}]},
    {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": {"default": float("nan")}}}}}]},
    {"tools": [{"type": "function", "function": {"name": "f", "description": "bad \udfff"}}]},
]

ODD_RESPONSES_BODIES = [
    {},
    {"input": None},
    {"input": ""},
    {"input": 42},
    {"input": [None, "x", {"type": "item_reference", "id": "msg_1"}, {"type": "web_search_call", "id": "ws"}]},
    {"input": [{"type": "message", "role": "tool", "content": "x"}, {"type": "message"}]},
    {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:x"}, {"type": "input_file"}]}]},
    {"input": [{"type": "reasoning", "content": None}, {"type": "reasoning", "content": [{"type": "reasoning_text"}]}]},
    {"input": [{"type": "function_call"}, {"type": "function_call_output"}]},
    {"input": [{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "t"}]}]},
    {"input": [{"type": "function_call_output", "call_id": "c", "output": {"structured": True}}]},
    {"instructions": ["not", "a", "string"], "input": "x"},
    {"instructions": 5, "input": [{"role": "system", "content": None}]},
    {"tools": [{"type": "mcp", "server_label": "x"}, {"type": "file_search"}], "input": "x"},
    {"tools": [{"type": "function"}, None, "x", {"type": ["function"]}, {"type": {"k": 1}}], "input": "x"},
    {"reasoning": "high", "input": "x"},
    {"input": "lone \ud800 surrogate", "instructions": "\udc00"},
]


@pytest.mark.parametrize("body", ODD_CHAT_BODIES)
def test_odd_chat_bodies_render_without_raising(body):
    text(render_chat_prompt(body))


@pytest.mark.parametrize("body", ODD_RESPONSES_BODIES)
def test_odd_responses_bodies_render_without_raising(body):
    text(render_responses_prompt(body))


@pytest.mark.parametrize("body", [None, [], "body"])
def test_a_body_that_is_not_an_object_renders_as_an_empty_body(body):
    assert render_chat_prompt(body) == render_chat_prompt({})
    assert render_responses_prompt(body) == render_responses_prompt({})


def test_lone_surrogates_are_replaced():
    rendered = chat(messages=[{"role": "user", "content": "a\ud800b"}])
    assert "<|start|>user<|message|>a\ufffdb<|end|>" in rendered


def test_tool_call_arguments_given_as_an_object_are_serialised_as_json():
    rendered = chat(
        messages=[{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}]
    )
    assert '<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>' in rendered


def test_rendering_is_deterministic_and_does_not_mutate_the_body():
    body = {"messages": [{"role": "system", "content": "x"}, *tool_turn(reasoning="r")], "tools": CHAT_TOOLS}
    before = copy.deepcopy(body)
    assert render_chat_prompt(body) == render_chat_prompt(body)
    assert body == before


def test_legacy_tool_call_headers_rewrites_assistant_calls_only():
    """vLLM 0.32/0.33 ``_use_legacy_tool_call_headers`` (parser/harmony_utils.py): an assistant
    call header becomes ``assistant to=<recipient><|channel|><channel> <content type>``; other
    headers (no ``<|constrain|>``, a tool author, a call without a recipient) stay as rendered."""
    from mockoss.harmony.prompt._common import legacy_tool_call_headers

    enc = load_encoding()
    kept = (
        "<|start|>assistant<|channel|>analysis<|message|>a to=b <|constrain|>json<|end|>"
        "<|start|>functions.f<|channel|>commentary to=assistant<|message|>r<|end|>"
        "<|start|>assistant<|channel|>final <|constrain|>json<|message|>{}<|return|>"
    )
    calls = (
        "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>"
        "<|start|>assistant<|channel|>analysis to=python <|constrain|>code<|message|>x<|call|>"
    )
    tokens = enc.encode(kept + calls, allowed_special="all")
    got = legacy_tool_call_headers(tokens)
    assert enc.decode(got) == kept + (
        "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|>"
        "<|start|>assistant to=python<|channel|>analysis code<|message|>x<|call|>"
    )
    assert len(got) == len(tokens) - 4  # two tokens fewer per rewritten header
    assert got == enc.encode(enc.decode(got), allowed_special="all")
