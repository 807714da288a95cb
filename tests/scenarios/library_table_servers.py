"""Expected outcomes of the shipped scenarios about server behaviour (tools, tool_choice, versions, limits).

Part of the table in test_library.py: scenario → target (``"PROFILE ENDPOINT [SWITCH=VALUE]"``)
→ what a client sees for each request, in order. Read across a scenario to see where servers
disagree.
"""

from library_support import PEG_500, Case, Seen

_THINK = "Need to list files. Use terminal."
_LEAKED = Seen(content='to=functions.terminal {"command":"ls"}', reasoning=_THINK, finish="stop")

SERVER_CASES: dict[str, Case] = {
    # docs/format.md: every server agrees.
    "clean-answer": Case(
        tools=(),
        expect={
            "vllm chat": [Seen(content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="stop")],
            "vllm responses": [Seen(items=("reasoning", "message"), content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="completed")],
            "ollama chat": [Seen(content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="stop")],
            "llamacpp chat": [Seen(content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="stop")],
            "lmstudio chat": [Seen(content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="stop")],
            "openai chat": [Seen(content="2 + 2 = 4.", reasoning="User asks: What is 2 + 2? Simple arithmetic. Provide answer.", finish="stop")],
        },
    ),
    # docs/format.md; vLLM 0.10.1 had no chat tool support (vllm#22403).
    "clean-tool-call": Case(
        tools=("get_weather",),
        expect={
            "vllm chat": [
                Seen(reasoning="Need to use function get_weather.", calls=(("function", "get_weather", "{\"location\": \"San Francisco\"}"),), finish="tool_calls"),
                Seen(content="It is sunny in San Francisco at 20 °C.", reasoning="The tool says it is sunny and 20 degrees.", finish="stop"),
            ],
            "vllm-0.10.1 chat": [
                Seen(status=500, error="Tool call in Chat Completion API is not supported for gpt-oss yet. Please use Responses API instead.", error_type="Internal Server Error"),
                Seen(content="It is sunny in San Francisco at 20 °C.", reasoning="The tool says it is sunny and 20 degrees.", finish="stop"),
            ],
            "ollama chat": [
                Seen(content="", reasoning="Need to use function get_weather.", calls=(("function", "get_weather", "{\"location\":\"San Francisco\"}"),), finish="tool_calls"),
                Seen(content="It is sunny in San Francisco at 20 °C.", reasoning="The tool says it is sunny and 20 degrees.", finish="stop"),
            ],
            "llamacpp chat": [
                Seen(content="", reasoning="Need to use function get_weather.", calls=(("function", "get_weather", "{\"location\":\"San Francisco\"}"),), finish="tool_calls"),
                Seen(content="It is sunny in San Francisco at 20 °C.", reasoning="The tool says it is sunny and 20 degrees.", finish="stop"),
            ],
            "lmstudio chat": [
                Seen(content="", reasoning="Need to use function get_weather.", calls=(("function", "get_weather", "{\"location\":\"San Francisco\"}"),), finish="tool_calls"),
                Seen(content="It is sunny in San Francisco at 20 °C.", reasoning="The tool says it is sunny and 20 degrees.", finish="stop"),
            ],
        },
    ),
    # vLLM PR 'Ignore Harmony recipients when no tools are configured': mcp_call vs message.
    "leaked-recipient-no-tools": Case(
        tools=(),
        expect={
            "vllm responses": [Seen(items=("reasoning", "mcp_call"), reasoning="The user asks to call get_current_time on the time MCP server for America/Los_Angeles.", calls=(("mcp_call", "tool/mcp", "{\"name\":\"get_current_time\",\"arguments\":{\"timezone\":\"America/Los_Angeles\"}}"),), finish="completed")],
            "vllm responses responses_ignore_recipients_without_tools=true": [Seen(items=("reasoning", "message"), content="{\"name\":\"get_current_time\",\"arguments\":{\"timezone\":\"America/Los_Angeles\"}}", reasoning="The user asks to call get_current_time on the time MCP server for America/Los_Angeles.", finish="completed")],
            "openai responses": [Seen(items=("reasoning", "message"), content="{\"name\":\"get_current_time\",\"arguments\":{\"timezone\":\"America/Los_Angeles\"}}", reasoning="The user asks to call get_current_time on the time MCP server for America/Los_Angeles.", finish="completed")],
            "llamacpp responses": [Seen(items=("reasoning",), reasoning="The user asks to call get_current_time on the time MCP server for America/Los_Angeles.", finish="completed")],
        },
    ),
    # hermes-agent#84158: no server catches a leak; the fourth request is a real call.
    # hermes-agent PR #84231's recovery: two leaks, then a proper call, then the answer (every server alike).
    "leak-twice-then-call": Case(
        tools=("terminal",),
        expect={
            key: [_LEAKED, _LEAKED, Seen(reasoning=_THINK, calls=(("function", "terminal", args),), finish="tool_calls", content=content),
                  Seen(content="The directory holds README.md and src/.", reasoning="The tool listed the files.", finish="stop")]
            for key, args, content in (
                ("vllm chat", '{"command": "ls"}', None),
                ("ollama chat", '{"command":"ls"}', ""),
                ("openai chat", '{"command": "ls"}', None),
            )
        },
    ),
    # hermes-agent PR #84231's give-up path: the leak never stops, so a gate must stop after 4 requests.
    "persistent-leak": Case(
        tools=("terminal",),
        expect={key: [_LEAKED] * 4 for key in ("vllm chat", "ollama chat", "openai chat")},
    ),
    "tool-call-leaked-as-text": Case(
        tools=("terminal",),
        expect={
            "vllm chat": [
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="assistant to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="<|channel|>commentary to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(reasoning="Need to list files. Use terminal.", calls=(("function", "terminal", "{\"command\": \"ls\"}"),), finish="tool_calls"),
            ],
            "ollama chat": [
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="assistant to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="<|channel|>commentary to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="", reasoning="Need to list files. Use terminal.", calls=(("function", "terminal", "{\"command\":\"ls\"}"),), finish="tool_calls"),
            ],
            "openai chat": [
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="assistant to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="<|channel|>commentary to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(reasoning="Need to list files. Use terminal.", calls=(("function", "terminal", "{\"command\": \"ls\"}"),), finish="tool_calls"),
            ],
        },
    ),
    # sglang PR #10576: the parser still reads a complete call.
    "tool-call-ended-with-return": Case(
        tools=("get_weather",),
        expect={
            "vllm chat": [Seen(reasoning="Need the weather in Tokyo.", calls=(("function", "get_weather", "{\"location\": \"Tokyo\"}"),), finish="tool_calls")],
            "ollama chat": [Seen(content="", reasoning="Need the weather in Tokyo.", calls=(("function", "get_weather", "{\"location\":\"Tokyo\"}"),), finish="tool_calls")],
            "llamacpp chat": [Seen(content="", reasoning="Need the weather in Tokyo.", calls=(("function", "get_weather", "{\"location\":\"Tokyo\"}"),), finish="tool_calls")],
            "lmstudio chat": [Seen(content="", reasoning="Need the weather in Tokyo.", calls=(("function", "get_weather", "{\"location\":\"Tokyo\"}"),), finish="tool_calls")],
        },
    ),
    # continue#10221, ollama#12884: Ollama 500; vLLM passes the raw text; LM Studio omits the call.
    "tool-arguments-not-json": Case(
        tools=("terminal",),
        expect={
            "vllm chat": [Seen(reasoning="List the files recursively.", calls=(("function", "terminal", "ls -R\n"),), finish="tool_calls")],
            "ollama ollama.chat": [Seen(status=500, error="error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value")],
            "ollama chat": [Seen(status=500, error="error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value", error_type="api_error")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="List the files recursively.", finish="stop")],
        },
    ),
    # ollama#11781: non-streamed 0.11.3 answered 'unexpected error format in response'.
    "ollama-0113-wrong-error-key": Case(
        tools=("shell",),
        expect={
            "ollama ollama.chat": [Seen(status=500, error="unexpected error format in response")],
            "ollama chat": [Seen(status=500, error="unexpected error format in response", error_type="api_error")],
        },
    ),
    # llama.cpp#15789 ran with --reasoning-format none: content held the raw analysis markup (the
    # reasoning_format=none row). The other rows, reasoning only, are no report's observation.
    "analysis-only-no-answer": Case(
        tools=("get_weather",),
        expect={
            "llamacpp chat reasoning_format=none": [Seen(content="<|channel|>analysis<|message|>The user wants the weather. I should call get_weather for Berlin.<|end|>", finish="stop")],
            "vllm chat": [Seen(reasoning="The user wants the weather. I should call get_weather for Berlin.", finish="stop")],
            "llamacpp chat": [Seen(content="", reasoning="The user wants the weather. I should call get_weather for Berlin.", finish="stop")],
            "lmstudio chat": [Seen(content="", reasoning="The user wants the weather. I should call get_weather for Berlin.", finish="stop")],
            "ollama chat": [Seen(content="", reasoning="The user wants the weather. I should call get_weather for Berlin.", finish="stop")],
        },
    ),
    # amd/playbooks PR #314: truncated reasoning, finish 'length'.
    "reasoning-cut-off-by-max-tokens": Case(
        tools=(),
        extra={"max_tokens": 24},
        expect={
            "vllm chat": [Seen(reasoning="The user wants a one-line summary of the quarterly report. The report covers revenue, costs, hiring and", finish="length")],
            "vllm responses": [Seen(items=("reasoning",), reasoning="The user wants a one-line summary of the quarterly report. The report covers revenue, costs, hiring and", finish="incomplete")],
            "ollama chat": [Seen(content="", reasoning="The user wants a one-line summary of the quarterly report. The report covers revenue, costs, hiring and", finish="length")],
            "lmstudio chat": [Seen(content="", reasoning="The user wants a one-line summary of the quarterly report. The report covers revenue, costs, hiring and", finish="length")],
        },
    ),
    # vllm#27385: a built-in tool called with no tools declared (the browser.search-then-python
    # sequence is ours, not the report's). browser.search → web_search_call ('cursor:' query); python → reasoning.
    "builtin-tool-called-without-tools": Case(
        tools=(),
        expect={
            "vllm responses": [
                Seen(items=("reasoning", "web_search_call"), reasoning="Need current data. Search the web.", calls=(("web_search_call", "search", "cursor:weather in Oslo today"),), finish="completed"),
                Seen(items=("reasoning", "reasoning"), reasoning="Compute it with python.\nprint(2**32)", finish="completed"),
            ],
            "vllm chat": [
                Seen(reasoning="Need current data. Search the web.\n{\"query\":\"weather in Oslo today\",\"topn\":3}", finish="stop"),
                Seen(reasoning="Compute it with python.\nprint(2**32)", finish="stop"),
            ],
            "ollama chat": [
                Seen(content="", reasoning="Need current data. Search the web.", calls=(("function", "browser.search", "{\"query\":\"weather in Oslo today\",\"topn\":3}"),), finish="tool_calls"),
                Seen(status=500, error="error parsing tool call: raw='print(2**32)', err=invalid character 'p' looking for beginning of value", error_type="api_error"),
            ],
            "llamacpp chat": [
                Seen(content="", reasoning="Need current data. Search the web.", finish="stop"),
                Seen(content="", reasoning="Compute it with python.", finish="stop"),
            ],
        },
    ),
    # vllm#30867: 2025 vLLM returns the call; current vLLM drops it.
    "tool-choice-none-still-calls": Case(
        tools=("get_weather",),
        extra={"tool_choice": "none"},
        expect={
            "vllm chat": [Seen(reasoning="The user asks for the weather. Call get_weather.", finish="stop")],
            "vllm chat tool_choice_none=ignored": [Seen(reasoning="The user asks for the weather. Call get_weather.", calls=(("function", "get_weather", "{\"location\": \"Lisbon\"}"),), finish="tool_calls")],
            "vllm-2025 chat": [Seen(reasoning="The user asks for the weather. Call get_weather.", calls=(("function", "get_weather", "{\"location\": \"Lisbon\"}"),), finish="tool_calls")],
        },
    ),
    # vllm#44216: prose with finish 'stop'; current vLLM says 'tool_calls' with no calls.
    "tool-choice-required-prose-reply": Case(
        tools=("get_weather",),
        extra={"tool_choice": "required"},
        expect={
            # vLLM 0.33's resolve_finish_reason needs a call for tool_calls
            # (vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py); 0.32 and the
            # report's releases said tool_calls for required + stop: finish_tool_calls_needs_calls=false.
            "vllm chat": [Seen(content="You're welcome!", reasoning="The user just says thanks. No tool needed.", finish="stop")],
            "vllm chat finish_tool_calls_needs_calls=false": [Seen(content="You're welcome!", reasoning="The user just says thanks. No tool needed.", finish="tool_calls")],
            "vllm chat tool_choice_required=ignored": [Seen(content="You're welcome!", reasoning="The user just says thanks. No tool needed.", finish="stop")],
            "vllm-2025 chat": [Seen(content="You're welcome!", reasoning="The user just says thanks. No tool needed.", finish="stop")],
        },
    ),
    # vllm#22337 (scenario switches): the raw arguments are also the content.
    "tool-call-duplicated-in-content": Case(
        tools=("write_file",),
        expect={
            "vllm chat": [Seen(content="{\n  \"path\": \"hello.py\",\n  \"content\": \"print('hi')\\nprint('bye')\\n\"\n}", reasoning="Write the script to a file.", calls=(("function", "write_file", "{\n  \"path\": \"hello.py\",\n  \"content\": \"print('hi')\\nprint('bye')\\n\"\n}"),), finish="tool_calls")],
        },
    ),
    # vllm#22403, #22879: HTTP 400 'Expected 2 output messages … but got 7.'
    "seven-messages-v0101-chat-error": Case(
        tools=(),
        expect={
            "vllm-0.10.1 chat": [Seen(status=400, error="Expected 2 output messages (reasoning and final), but got 7.", error_type="BadRequestError")],
            "vllm-2025 chat": [Seen(content="Here is your plan: fly Friday, stay two nights.", reasoning="The user wants a trip plan.\nPlan: check flights, hotels, weather.\nFlights first.\nChecking flights.\nHotels next.\nChecking hotels.", finish="stop")],
            "vllm chat": [Seen(content="Plan: check flights, hotels, weather.\nChecking flights.\nChecking hotels.\nHere is your plan: fly Friday, stay two nights.", reasoning="The user wants a trip plan.\nFlights first.\nHotels next.", finish="stop")],
        },
    ),
    # vllm#23694: the answer lands in reasoning_content, content empty.
    "final-only-answer-in-reasoning": Case(
        tools=(),
        expect={
            "vllm-0.10.1 chat": [Seen(content="", reasoning="{\"issues\":[]}", finish="stop")],
            "vllm-2025 chat": [Seen(content="{\"issues\":[]}", reasoning="{\"issues\":[]}", finish="stop")],
            "vllm chat": [Seen(content="{\"issues\":[]}", finish="stop")],
        },
    ),
    # llama.cpp PR #15181 (scenario switch): markup in content.
    "markup-in-content-with-reasoning-format-none": Case(
        tools=(),
        expect={
            "llamacpp chat": [Seen(content="<|channel|>analysis<|message|>The user asks: What is 2 + 2? Simple.<|end|>2 + 2 = 4.", finish="stop")],
        },
    ),
    # hermes-agent#24933: the preamble is content (a message item) next to the call.
    "preamble-then-tool-call": Case(
        tools=("terminal",),
        expect={
            "vllm chat": [Seen(content="Need verify. Use terminal.", reasoning="The user wants the disk usage.", calls=(("function", "terminal", "{\"command\": \"df -h\"}"),), finish="tool_calls")],
            "vllm responses": [Seen(items=("reasoning", "message", "function_call"), content="Need verify. Use terminal.", reasoning="The user wants the disk usage.", calls=(("function_call", "terminal", "{\"command\":\"df -h\"}"),), finish="completed")],
            "vllm-2025 responses": [Seen(items=("reasoning", "reasoning", "function_call"), reasoning="The user wants the disk usage.\nNeed verify. Use terminal.", calls=(("function_call", "terminal", "{\"command\":\"df -h\"}"),), finish="completed")],
            "ollama chat": [Seen(content="Need verify. Use terminal.", reasoning="The user wants the disk usage.", calls=(("function", "terminal", "{\"command\":\"df -h\"}"),), finish="tool_calls")],
        },
    ),
    # vllm#51977 / PR #52055: hyphens parse fine everywhere.
    "hyphenated-tool-name-ok": Case(
        tools=("web-browsing",),
        expect={
            "vllm chat": [Seen(reasoning="Look it up online.", calls=(("function", "web-browsing", "{\"query\": \"harmony response format\"}"),), finish="tool_calls")],
            "ollama chat": [Seen(content="", reasoning="Look it up online.", calls=(("function", "web-browsing", "{\"query\":\"harmony response format\"}"),), finish="tool_calls")],
            "llamacpp chat": [Seen(content="", reasoning="Look it up online.", calls=(("function", "web-browsing", "{\"query\":\"harmony response format\"}"),), finish="tool_calls")],
        },
    ),
    # hermes-agent PR #84231: three leaks, then the scripted 500.
    "tool-call-leaked-three-times": Case(
        tools=("terminal",),
        expect={
            "vllm chat": [
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(content="to=functions.terminal {\"command\":\"ls\"}", reasoning="Need to list files. Use terminal.", finish="stop"),
                Seen(status=500, error="mockoss: the client re-prompted a fourth time; hermes-agent gives up after 3 attempts", error_type="InternalServerError"),
            ],
        },
    ),
    # NVIDIA/TensorRT-LLM#9256: trtllm-serve wraps a recipientless commentary message in markup.
    "recipientless-call-wrapped-in-content": Case(
        tools=("grep",),
        expect={
            "trtllm chat": [Seen(content='<|channel|>commentary<|message|>{"path": "/", "name_pattern": "*Chen*", "type_filter": "file"}<|end|>', reasoning="No matches. Try a broader pattern.", finish="stop")],
            "vllm chat": [Seen(content='{"path": "/", "name_pattern": "*Chen*", "type_filter": "file"}', reasoning="No matches. Try a broader pattern.", finish="stop")],
        },
    ),
    # waybarrios/vllm-mlx#562: vllm-mlx's engine cleans the text before its parsers, so the call
    # and the analysis channel end up as content when not streamed; Harmony-token servers call.
    "read-file-call-after-analysis": Case(
        tools=("read_file",),
        expect={
            "vllm-mlx chat": [Seen(content='The user wants the hosts file. Use read_file.{"path":"/etc/hosts"}', finish="stop")],
            "vllm-mlx chat reasoning_parser=harmony": [Seen(content='The user wants the hosts file. Use read_file.{"path":"/etc/hosts"}', finish="stop")],
            "vllm chat": [Seen(reasoning="The user wants the hosts file. Use read_file.", calls=(("function", "read_file", '{"path": "/etc/hosts"}'),), finish="tool_calls")],
            "mlx-lm chat": [Seen(content='<|channel|>analysis<|message|>The user wants the hosts file. Use read_file.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path":"/etc/hosts"}', finish="stop")],
        },
    ),
}
