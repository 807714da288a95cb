"""What the ollama profile's exact-output tests (``test_ollama_native.py``, ``test_ollama_openai.py``)
share: the scripted completions both APIs are fed, and the error Ollama answers for tool-call
arguments that are not JSON."""

from __future__ import annotations

from mockoss.harmony import Completion

ANSWER = Completion.from_text(
    "<|channel|>analysis<|message|>Hi.<|end|><|start|>assistant<|channel|>final<|message|>Yes.<|return|>"
)
TOOL = Completion.from_text(
    "<|channel|>analysis<|message|>Hm.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"<Paris>"}<|call|>'
)
BAD_ARGS = Completion.from_text(
    "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>commentary to=functions.terminal<|message|>ls -R\n<|call|>"
)
BAD_ARGS_ONLY = Completion.from_text("<|channel|>commentary to=functions.terminal<|message|>ls -R\n<|call|>")
BAD_ERROR = "error parsing tool call: raw='ls -R\\n', err=invalid character 'l' looking for beginning of value"
