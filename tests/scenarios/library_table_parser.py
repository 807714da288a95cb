"""Expected outcomes of the shipped scenarios that break the Harmony parse (headers, stop tokens, markup).

Part of the table in test_library.py: scenario → target (``"PROFILE ENDPOINT [SWITCH=VALUE]"``)
→ what a client sees for each request, in order. Read across a scenario to see where servers
disagree.
"""

from library_support import PEG_500, Case, Seen

PARSER_CASES: dict[str, Case] = {
    # vllm#51977: HarmonyError → HTTP 500 (400 before the RuntimeError mapping changed); others differ.
    "malformed-header-duplicate-recipient": Case(
        tools=("x",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Need to call x.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.x\")", error_type="InternalServerError")],
            "vllm chat harmony_error_status=400 harmony_errors=raise": [Seen(status=400, error="unexpected tokens remaining in message header: Some(\"to=functions.x\")", error_type="BadRequestError")],
            "vllm-2025 chat": [Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.x\")", error_type="Internal Server Error")],
            "ollama chat": [Seen(content="", reasoning="Need to call x.", calls=(("function", "x", "{}"),), finish="tool_calls")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="Need to call x.", finish="stop")],
        },
    ),
    # vllm#23567: the second turn fails on vLLM; Ollama's header parser only looks for `to=`.
    "space-after-constrain-header-error": Case(
        tools=("read_file",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\": \"notes.txt\"}"),), finish="tool_calls"), Seen(reasoning="Now read the second file.", finish="stop")],
            "vllm chat harmony_errors=raise": [
                Seen(reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\": \"notes.txt\"}"),), finish="tool_calls"),
                Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.read_file\")", error_type="InternalServerError"),
            ],
            "vllm-2025 chat": [
                Seen(reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\": \"notes.txt\"}"),), finish="tool_calls"),
                Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.read_file\")", error_type="Internal Server Error"),
            ],
            "ollama chat": [
                Seen(content="", reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\":\"notes.txt\"}"),), finish="tool_calls"),
                Seen(content="", reasoning="Now read the second file.", calls=(("function", "read_file", "{\"path\":\"todo.txt\"}"),), finish="tool_calls"),
            ],
            "llamacpp chat": [
                Seen(content="", reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\":\"notes.txt\"}"),), finish="tool_calls"),
                PEG_500,
            ],
            "lmstudio chat": [
                Seen(content="", reasoning="Need to read the file first.", calls=(("function", "read_file", "{\"path\":\"notes.txt\"}"),), finish="tool_calls"),
                Seen(content="", reasoning="Now read the second file.", finish="stop"),
            ],
        },
    ),
    # openai/harmony#38, #60: three header parts → HarmonyError.
    "extra-content-type-header-error": Case(
        tools=("bash",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Need to list files.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.bash\")", error_type="InternalServerError")],
            "ollama chat": [Seen(content="", reasoning="Need to list files.", calls=(("function", "bash", "{\"cmd\":[\"ls\",\"-la\"]}"),), finish="tool_calls")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="Need to list files.", finish="stop")],
        },
    ),
    # vllm#51977 'intermittently fail with HTTP 500': request 3 of 4 fails.
    "duplicate-recipient-every-third-call": Case(
        tools=("web-browsing",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls"), Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls"), Seen(reasoning="Search the web for the release date.", finish="stop"), Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls")],
            "vllm chat harmony_errors=raise": [
                Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls"),
                Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls"),
                Seen(status=500, error="unexpected tokens remaining in message header: Some(\"to=functions.web-browsing\")", error_type="InternalServerError"),
                Seen(reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\": \"gpt-oss release date\"}"),), finish="tool_calls"),
            ],
            "ollama chat": [
                Seen(content="", reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\":\"gpt-oss release date\"}"),), finish="tool_calls"),
                Seen(content="", reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\":\"gpt-oss release date\"}"),), finish="tool_calls"),
                Seen(content="", reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\":\"gpt-oss release date\"}"),), finish="tool_calls"),
                Seen(content="", reasoning="Search the web for the release date.", calls=(("function", "web-browsing", "{\"query\":\"gpt-oss release date\"}"),), finish="tool_calls"),
            ],
        },
    ),
    # openai/harmony#144, vllm#45570: 2025 Responses returns an mcp_call; current vLLM a message.
    "constrained-final-as-mcp-call": Case(
        tools=(),
        expect={
            "vllm-2025 responses": [Seen(items=("reasoning", "mcp_call"), reasoning="The user wants a JSON verdict.", calls=(("mcp_call", "<|constrain|>json/<|constrain|>json", "{\"result\":true}"),), finish="completed")],
            "vllm-0.10.1 responses": [Seen(items=("reasoning", "mcp_call"), reasoning="The user wants a JSON verdict.", calls=(("mcp_call", "<|constrain|>json/<|constrain|>json", "{\"result\":true}"),), finish="completed")],
            "vllm responses": [Seen(items=("reasoning", "message"), content="{\"result\":true}", reasoning="The user wants a JSON verdict.", finish="completed")],
            "vllm chat": [Seen(content="{\"result\":true}", reasoning="The user wants a JSON verdict.", finish="stop")],
            "ollama chat": [Seen(content="{\"result\":true}", reasoning="The user wants a JSON verdict.", finish="stop")],
            "openai responses": [Seen(items=("reasoning", "message"), content="{\"result\":true}", reasoning="The user wants a JSON verdict.", finish="completed")],
        },
    ),
    # openai/harmony#144: `<|constrain|>json` read as the recipient.
    "constrained-tool-call-becomes-content": Case(
        tools=("get_weather",),
        expect={
            "vllm chat": [Seen(content="{\"city\":\"Paris\"}", reasoning="Need the weather for Paris.", finish="stop")],
            "vllm-2025 chat": [Seen(reasoning="Need the weather for Paris.", finish="stop")],
            "vllm-2025 responses": [Seen(items=("reasoning", "mcp_call"), reasoning="Need the weather for Paris.", calls=(("mcp_call", "<|constrain|>json/<|constrain|>json", "{\"city\":\"Paris\"}"),), finish="completed")],
            "ollama chat": [Seen(content="{\"city\":\"Paris\"}", reasoning="Need the weather for Paris.", finish="stop")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="Need the weather for Paris.", finish="stop")],
        },
    ),
    # vllm#32587: the tool is called `bash<|channel|>commentary`; openai (the fix) calls `bash`.
    "tool-name-with-channel-token": Case(
        tools=("bash",),
        expect={
            # vLLM 0.32/0.33 ship oss-harmony 0.0.11, which cuts the second <|channel|> out of the header (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_library=openai-harmony-0.0.8.
            "vllm chat": [Seen(reasoning="Need to list files.", calls=(("function", "bash", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
            "vllm chat harmony_library=openai-harmony-0.0.8": [Seen(reasoning="Need to list files.", calls=(("function", "bash<|channel|>commentary", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
            # vLLM 0.32/0.33 ship oss-harmony 0.0.11, which cuts the second <|channel|> out of the header (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_library=openai-harmony-0.0.8.
            "vllm responses": [Seen(items=("reasoning", "function_call"), reasoning="Need to list files.", calls=(("function_call", "bash", "{\"cmd\":[\"ls\"]}"),), finish="completed")],
            "vllm responses harmony_library=openai-harmony-0.0.8": [Seen(items=("reasoning", "function_call"), reasoning="Need to list files.", calls=(("function_call", "bash<|channel|>commentary", "{\"cmd\":[\"ls\"]}"),), finish="completed")],
            # vllm-2025 ran openai-harmony (0.0.4-0.0.8): named here so the row holds whatever the release's defaults
            "vllm-2025 chat harmony_library=openai-harmony-0.0.8": [Seen(reasoning="Need to list files.", calls=(("function", "bash<|channel|>commentary", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
            "ollama chat": [Seen(content="", reasoning="Need to list files.", calls=(("function", "bash<|channel|>commentary", "{\"cmd\":[\"ls\"]}"),), finish="tool_calls")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="Need to list files.", finish="stop")],
            "openai chat": [Seen(reasoning="Need to list files.", calls=(("function", "bash", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
        },
    ),
    # vllm#32587 family: role `tool` → current vLLM drops the call, the 2025 parser keeps it.
    "doubled-channel-tool-call-vanishes": Case(
        tools=("bash",),
        expect={
            # vLLM 0.32/0.33 ship oss-harmony 0.0.11, which cuts the second <|channel|> out of the header (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_library=openai-harmony-0.0.8.
            "vllm chat": [Seen(reasoning="Need to list files.", calls=(("function", "bash", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
            "vllm chat harmony_library=openai-harmony-0.0.8": [Seen(reasoning="Need to list files.", finish="stop")],
            # vLLM 0.32/0.33 ship oss-harmony 0.0.11, which cuts the second <|channel|> out of the header (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_library=openai-harmony-0.0.8.
            "vllm responses": [Seen(items=("reasoning", "function_call"), reasoning="Need to list files.", calls=(("function_call", "bash", "{\"cmd\":[\"ls\"]}"),), finish="completed")],
            "vllm responses harmony_library=openai-harmony-0.0.8": [Seen(items=("reasoning",), reasoning="Need to list files.", finish="completed")],
            "vllm-2025 chat": [Seen(reasoning="Need to list files.", calls=(("function", "bash", "{\"cmd\": [\"ls\"]}"),), finish="tool_calls")],
            "ollama chat": [Seen(content="{\"cmd\":[\"ls\"]}", reasoning="Need to list files.", finish="stop")],
            "llamacpp chat": [PEG_500],
        },
    ),
    # sglang#8914: 'channel marker present but no channel value found in header', raised inside a
    # stream there (a crash mid-stream, not an HTTP 500); no sglang profile, so every row is unsourced.
    "empty-channel-header-error": Case(
        tools=(),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="User asks for the capital of Canada.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="channel marker present but no channel value found in header", error_type="InternalServerError")],
            "ollama chat": [Seen(content="Ottawa.", reasoning="User asks for the capital of Canada.", finish="stop")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="User asks for the capital of Canada.", finish="stop")],
        },
    ),
    # tenstorrent/vllm#386: 'Unknown role: assistantassistant'.
    "doubled-role-unknown-role-error": Case(
        tools=(),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Compute 7 * 6.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="Unknown role: assistantassistant", error_type="InternalServerError")],
            "vllm chat harmony_error_status=400 harmony_errors=raise": [Seen(status=400, error="Unknown role: assistantassistant", error_type="BadRequestError")],
            "ollama chat": [Seen(content="42", reasoning="Compute 7 * 6.", finish="stop")],
            "llamacpp chat": [PEG_500],
        },
    ),
    # LlamaFactory PR #10269 quotes vLLM's HTTP 500, type 'Internal Server Error' (vllm-2025).
    "end-then-return-after-answer": Case(
        tools=(),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(content="The answer is 5!", reasoning="Simple arithmetic.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="Unexpected token 200002 while expecting start token 200006", error_type="InternalServerError")],
            "vllm-2025 chat": [Seen(status=500, error="Unexpected token 200002 while expecting start token 200006", error_type="Internal Server Error")],
            "ollama chat": [Seen(content="The answer is 5!", reasoning="Simple arithmetic.", finish="stop")],
            "llamacpp chat": [Seen(content="The answer is 5!", reasoning="Simple arithmetic.", finish="stop")],
            "lmstudio chat": [Seen(content="The answer is 5!", reasoning="Simple arithmetic.", finish="stop")],
        },
    ),
    # crush#611 (vLLM 0.10.1+gptoss): 'Unexpected token 200012 …'.
    "end-then-call-after-tool-call": Case(
        tools=("view",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Need to read the config.", calls=(("function", "view", "{\"file_path\": \"crush.json\"}"),), finish="tool_calls")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="Unexpected token 200012 while expecting start token 200006", error_type="InternalServerError")],
            "vllm-0.10.1 chat": [Seen(status=500, error="Unexpected token 200012 while expecting start token 200006", error_type="Internal Server Error")],
            "ollama chat": [Seen(content="", reasoning="Need to read the config.", calls=(("function", "view", "{\"file_path\":\"crush.json\"}"),), finish="tool_calls")],
            "llamacpp chat": [Seen(content="", reasoning="Need to read the config.", calls=(("function", "view", "{\"file_path\":\"crush.json\"}"),), finish="tool_calls")],
        },
    ),
    # openai/harmony#60: vLLM fails; Ollama drops text outside messages.
    "text-between-messages": Case(
        tools=(),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(content="Hello! How can I help?", reasoning="User greets. Reply politely.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="Unexpected token 58168 while expecting start token 200006", error_type="InternalServerError")],
            "ollama chat": [Seen(content="Hello! How can I help?", reasoning="User greets. Reply politely.", finish="stop")],
            "llamacpp chat": [PEG_500],
            "lmstudio chat": [Seen(content="", reasoning="User greets. Reply politely.", finish="stop")],
        },
    ),
    # openai/harmony#60: 'Unexpected token 12606 while expecting start token 200006'.
    "missing-start-before-tool-call": Case(
        tools=("search",),
        expect={
            # vLLM 0.32/0.33 HarmonyParser.process_chunk skips the erroring tokens; the message is dropped, HTTP 200 (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py); the report's release: harmony_errors=raise.
            "vllm chat": [Seen(reasoning="Need to search the docs.", finish="stop")],
            "vllm chat harmony_errors=raise": [Seen(status=500, error="Unexpected token 12606 while expecting start token 200006", error_type="InternalServerError")],
            "ollama chat": [Seen(content="", reasoning="Need to search the docs.", finish="stop")],
            "llamacpp chat": [PEG_500],
        },
    ),
    # The answer, markup and all, is inside the reasoning; no content.
    "missing-end-reasoning-swallows-answer": Case(
        tools=(),
        expect={
            "vllm chat": [Seen(reasoning="User says hello. Respond politely.<|start|>assistant<|channel|>final<|message|>Hello! How can I help you today?", finish="stop")],
            "vllm-2025 chat": [Seen(reasoning="User says hello. Respond politely.<|start|>assistant<|channel|>final<|message|>Hello! How can I help you today?", finish="stop")],
            "ollama chat": [Seen(content="", reasoning="User says hello. Respond politely.<|start|>assistant<|channel|>final<|message|>Hello! How can I help you today?", finish="stop")],
        },
    ),
    # textgen#7374, sglang#9244: 'analysis…assistantfinal…' as content.
    "special-tokens-stripped-from-output": Case(
        tools=(),
        expect={
            # The scripted engine follows a script without a stop token with <|endoftext|> (switch
            # end_of_script_eos; the vLLM 0.33 golden of this scenario ends its content with it).
            "vllm chat": [Seen(content="analysisUser says \"Hello World!\" Probably greeting. Should respond politely.assistantfinalHello! How can I help you today?<|endoftext|>", finish="stop")],
            "vllm chat end_of_script_eos=false": [Seen(content="analysisUser says \"Hello World!\" Probably greeting. Should respond politely.assistantfinalHello! How can I help you today?", finish="stop")],
            "vllm chat flush_raw_recovery=false": [Seen(finish="stop")],
            "llamacpp chat": [PEG_500],
        },
    ),
    # vllm#45736: content null + finish stop (flush_raw_recovery=false); now the raw header.
    "answer-cut-inside-header": Case(
        tools=(),
        expect={
            # end_of_script_eos: the vLLM 0.33 golden of this scenario recovers "<|start|>assistant<|channel|>final<|endoftext|>".
            "vllm chat": [Seen(content="<|start|>assistant<|channel|>final<|endoftext|>", reasoning="User asks for a haiku about rain. Write one.", finish="stop")],
            "vllm chat end_of_script_eos=false": [Seen(content="<|start|>assistant<|channel|>final", reasoning="User asks for a haiku about rain. Write one.", finish="stop")],
            "vllm chat flush_raw_recovery=false": [Seen(reasoning="User asks for a haiku about rain. Write one.", finish="stop")],
            "ollama chat": [Seen(content="", reasoning="User asks for a haiku about rain. Write one.", finish="stop")],
            "lmstudio chat": [Seen(content="", reasoning="User asks for a haiku about rain. Write one.", finish="stop")],
        },
    ),
    # llama.cpp#25321: HTTP 500 peg-native; vLLM's flush() returns the raw text.
    "bare-answer-without-channel": Case(
        tools=(),
        expect={
            "llamacpp chat": [PEG_500],
            "vllm chat": [Seen(content="The capital of Canada is Ottawa.<|return|>", finish="stop")],
            "ollama chat": [Seen(content="", finish="stop")],
        },
    ),
}
