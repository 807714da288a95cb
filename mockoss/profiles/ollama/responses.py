"""``POST /v1/responses`` as Ollama serves gpt-oss.

Ollama turns the request into a native chat request and rewrites the chat handler's responses
(``ollama/ollama:middleware/openai.go`` ``ResponsesMiddleware``/``ResponsesWriter``,
``openai/responses.go`` ``ToResponse`` and ``ResponsesStreamConverter`` at ``fb307609``).

Non-streamed (``ToResponse``, a Go struct, fields in declaration order, ``json.Encoder`` newline):
a ``reasoning`` item ``rs_<response id>`` with ``summary:[{"type":"summary_text","text":…}]`` and
``encrypted_content`` = the raw thinking; then either the ``function_call`` items
(``fc_<response id>_<i>``, ``status: completed``) or, without tool calls, one ``message`` item
(``msg_<n>``); content next to a tool call is dropped. ``store`` is ``false``, ``tool_choice``
``"auto"``, usage counts no reasoning or cached tokens.

Streamed (Go maps: every object's keys sorted; frames ``event: T\\ndata: {…}\\n\\n``, with
``Cache-Control: no-cache``): ``response.created``, ``response.in_progress``; thinking as
``response.output_item.added`` (a ``reasoning`` item ``rs_<n>``, a new id for each item:
thinking that resumes after text opens another) and
``response.reasoning_summary_text.delta`` (not ``reasoning_text``, see the TODO in
``responses.go``); when text or a tool call follows, or at the end,
``response.reasoning_summary_text.done`` and ``response.output_item.done``; text as
``output_item.added``, ``content_part.added``, ``output_text.delta``…, closed at the end with
``output_text.done``, ``content_part.done``, ``output_item.done``; a tool call as
``output_item.added`` (``in_progress``, empty arguments), one ``function_call_arguments.delta``
with all arguments, ``function_call_arguments.done``, ``output_item.done`` (item ``fc_<n>_0``);
text after a tool call is not streamed; ``response.completed`` last (its ``output`` ``null`` when
no item was produced: ``buildFinalOutput`` appends to a nil slice, ``openai/responses.go:1536``).

A tool call that fails to decode: non-streamed, and streamed before any event, HTTP 500 with the
OpenAI error body; streamed later, the events so far and nothing more (no ``response.completed``,
no ``response.failed``: Ollama's error line decodes as an empty response, which produces no event),
and a ``mockoss:`` request-log line saying why (:func:`~mockoss.profiles.ollama.errors.stream_cut_note`).
``response.failed`` exists only on Ollama's web-search path, which mockoss does not emulate.
A generation cut by the runner's token-repeat abort (:mod:`~mockoss.profiles.ollama.repeat`)
ends like that too, without the error; non-streamed it is ``completed`` with zero usage.

Everything but ids, timestamps and token counts is built once per (generation, request echo,
model) with placeholders, and filled per request. The placeholders are ones that occur nowhere in
the reply's echoed or generated text (:func:`_holes_for`), so that text is never filled in.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.ollama.errors import openai_error, stream_cut_note
from mockoss.profiles.ollama.generation import Generation, run
from mockoss.profiles.ollama.gojson import dumps
from mockoss.profiles.ollama.ids import rand_int, tool_call_id
from mockoss.profiles.ollama.native import UNEXPECTED_ERROR_FORMAT
from mockoss.profiles.ollama.repeat import REPEAT_NOTE, wrong_key
from mockoss.profiles.ollama.requests import max_tokens_of, responses_prefill, responses_tool_names
from mockoss.profiles.ollama.responses_objects import Echo, response_object, text_part, usage
from mockoss.profiles.ollama.responses_stream import StreamConverter
from mockoss.profiles.ollama.timeline import Timeline
from mockoss.profiles.replay import FramesTemplate, Template

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.ollama import OllamaProfile

__all__ = ["surface_ollama_responses"]

_NS = 1_000_000_000
SSE_HEADERS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("connection", "keep-alive"))

# Placeholders: the strings pass Go's string escaping unchanged; the numbers are implausible counts.
_RESP, _MSG, _RS, _FC, _CALL = (
    "@@mockoss-resp@@",
    "@@mockoss-msg@@",
    "@@mockoss-rs@@",
    "@@mockoss-fc@@",
    "@@mockoss-call@@",
)
_PROMPT, _TOTAL, _FIRST, _DONE = 9087650001, 9087650002, 9087650003, 9087650004
_SEP = "\x1e"  # never raw in Go JSON (escaped as \u001e inside strings)


@dataclass(frozen=True, slots=True)
class _Holes:
    """One set of placeholders: the id strings, then the numbers (prompt and total tokens, the
    first token's and the end's second)."""

    resp: str
    msg: str
    rs: str
    call: str
    fc: str
    prompt: int
    total: int
    first: int
    done: int

    def strings(self) -> tuple[str, ...]:
        """The holes as they appear in a template, in the order :func:`_fill` fills them."""
        ids = (self.resp, self.msg, self.rs, self.call, self.fc)
        return ids + tuple(str(n) for n in (self.prompt, self.total, self.first, self.done))

    def reasoning(self, n: int) -> str:
        """The id hole of a stream's ``n``-th reasoning item (0-based): :attr:`rs` for the first,
        ``@@mockoss-rs+<n>@@`` (salted ``@@mockoss-rs-<k>+<n>@@``) for later ones, each filled
        with an id of its own, drawn after the others (:func:`_fill`)."""
        return self.rs if n == 0 else f"{self.rs[:-2]}+{n}@@"


_DEFAULT = _Holes(_RESP, _MSG, _RS, _CALL, _FC, _PROMPT, _TOTAL, _FIRST, _DONE)


def _salted(k: int) -> _Holes:
    """The ``k``-th other set of placeholders (``k >= 1``), for texts that hold the default ones."""
    return _Holes(
        *(f"{hole[:-2]}-{k}@@" for hole in (_RESP, _MSG, _RS, _CALL, _FC)),
        *(n + 10 * k for n in (_PROMPT, _TOTAL, _FIRST, _DONE)),
    )


def _holes_for(probe: str) -> _Holes:
    """The first set of placeholders none of which occurs in ``probe`` (the reply's echoed and
    generated text): a placeholder in the user's or the script's text would otherwise be filled
    with an id or a count. The default set for all but such texts (the same bytes as before)."""
    taken = _taken_salts(probe)
    k = 0
    while k in taken:
        k += 1
    return _DEFAULT if k == 0 else _salted(k)


#: A placeholder string of any set (its salt ``-k``, none for the default set), found overlapping.
_SALTED_STRING = re.compile(r"(?=@@mockoss-(?:resp|msg|rs|fc|call)(?:-([1-9][0-9]*))?(?:\+[0-9]+)?@@)")
_DIGITS = re.compile(r"[0-9]{10,}")


def _taken_salts(probe: str) -> set[int]:
    """The salts ``k`` (0: the default set) some placeholder of which occurs in ``probe``, found in
    one pass: a placeholder string by its pattern, a placeholder number (``9087650001 + 10k + j``,
    ``j < 4``, ten digits) in every ten-digit window of a run of digits (a substring, as ``in``
    finds it). Trying the sets one by one scanned the whole text once per set: quadratic in a
    request that lists many salted placeholders (0.35 s for 175 KB; eighth session's final review)."""
    taken = {int(k) if k else 0 for k in _SALTED_STRING.findall(probe)}
    for found in _DIGITS.finditer(probe):
        digits = found.group()
        for start in range(len(digits) - 9):
            offset = int(digits[start : start + 10]) - _PROMPT
            if offset >= 0 and offset % 10 < 4:
                taken.add(offset // 10)
    return taken


@dataclass(frozen=True, slots=True)
class _Template:
    """A reply with holes: ``text`` (frames joined by ``_SEP``, or the body), the id placeholders
    it uses, and whether it is a stream."""

    text: str
    uses: tuple[str, ...]
    streamed: bool
    #: The placeholders ``text`` is made with (:func:`_holes_for`).
    holes: _Holes = _DEFAULT
    #: The holes of the stream's later reasoning items (:meth:`_Holes.reasoning`), in order.
    extra: tuple[str, ...] = ()
    #: The frames (or body) cut at the holes once (:mod:`mockoss.profiles.replay`, markers
    #: numbered as :meth:`_Holes.strings`), filled per request in one pass instead of a ``str.replace`` of
    #: the whole text per hole (a 10,000-token stream: 7 passes over ~3 MB, then a split and an
    #: encode per frame, ~12-25 ms a request); ``None`` when the scripted text holds ``mockoss-``.
    compiled: FramesTemplate | Template | None = None


def _fill(template: _Template, generation: Generation, profile: OllamaProfile, ctx: RequestContext) -> Reply:
    """Draw the ids (response, message, then reasoning, tool call, function-call item) and put the
    request's ids, times and counts into ``template``."""
    ids = ctx.ids
    h = template.holes
    draws = {
        h.resp: lambda: f"resp_{rand_int(ids, 999999)}",
        h.msg: lambda: f"msg_{rand_int(ids, 999999)}",
        h.rs: lambda: f"rs_{rand_int(ids, 999999)}",
        h.call: lambda: tool_call_id(ids),
        h.fc: lambda: f"fc_{rand_int(ids, 999999)}",
    }
    holes = h.strings()
    if template.compiled is not None:  # the same values, drawn in the same order, put in at the holes
        values = [
            draws[hole]().encode() if hole in template.uses or hole in (h.resp, h.msg) else b"" for hole in holes[:5]
        ]
        clock = Timeline.of(profile, ctx, generation.eval_count)
        first = clock.token_ns(generation.chunks[0].position) if generation.chunks else clock.done_ns
        values += [str(n).encode() for n in _numbers(generation, ctx, first, clock.done_ns)]
        values += [draws[h.rs]().encode() for _ in template.extra]
        if isinstance(template.compiled, Template):
            return Reply(status=200, body=template.compiled.fill(values))
        return Reply(
            status=200,
            media_type="text/event-stream",
            frames=tuple(template.compiled.fill(values)),
            headers=SSE_HEADERS,
        )
    text = template.text
    for placeholder in holes[:5]:
        if placeholder in template.uses or placeholder in (h.resp, h.msg):
            value = draws[placeholder]()
            text = text.replace(placeholder, value)
    clock = Timeline.of(profile, ctx, generation.eval_count)
    first = clock.token_ns(generation.chunks[0].position) if generation.chunks else clock.done_ns
    for placeholder, value in zip(holes[5:], _numbers(generation, ctx, first, clock.done_ns)):
        text = text.replace(placeholder, str(value))
    for placeholder in template.extra:
        text = text.replace(placeholder, draws[h.rs]())
    if not template.streamed:
        return Reply(status=200, body=text.encode())
    frames = tuple(frame.encode() for frame in text.split(_SEP))
    return Reply(status=200, media_type="text/event-stream", frames=frames, headers=SSE_HEADERS)


def _numbers(generation: Generation, ctx: RequestContext, first_ns: int, done_ns: int) -> tuple[int, ...]:
    """The prompt's tokens, the total, the first and the last response's unix seconds (zero counts
    after the repeat abort: the last response carries no metrics)."""
    prompt = 0 if generation.aborted else ctx.prompt_tokens
    return (prompt, prompt + (0 if generation.aborted else generation.eval_count), first_ns // _NS, done_ns // _NS)


def _uses(text: str, h: _Holes) -> tuple[str, ...]:
    return tuple(p for p in (h.rs, h.call, h.fc) if p in text)


def _compiled(text: str, streamed: bool, h: _Holes, extra: tuple[str, ...] = ()) -> FramesTemplate | Template | None:
    """``text`` cut at its holes (see :attr:`_Template.compiled`; ``extra``: :attr:`_Template.extra`,
    numbered after the others); ``None`` when the text (the scripted answer, the echoed request)
    holds what a marker of :mod:`mockoss.profiles.replay` is made of."""
    if "mockoss-id:" in text or "mockoss-val:" in text:
        return None
    holes = (*h.strings(), *extra)
    pattern = re.compile("|".join(map(re.escape, holes)))
    marked = pattern.sub(lambda match: f"\x00mockoss-id:{holes.index(match.group())}\x00", text)
    return FramesTemplate(marked.split(_SEP)) if streamed else Template(marked)


def _full_template(generation: Generation, echo: Echo, model: str, h: _Holes) -> _Template:
    output: list[Any] = []
    if generation.thinking:
        summary = [{"type": "summary_text", "text": generation.thinking}]
        output.append(
            {"id": f"rs_{h.resp}", "type": "reasoning", "summary": summary, "encrypted_content": generation.thinking}
        )
    call = generation.tool_call
    if call is not None:
        output.append(
            {
                "id": f"fc_{h.resp}_0",
                "type": "function_call",
                "status": "completed",
                "call_id": h.call,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    else:
        output.append(
            {
                "id": h.msg,
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [text_part(generation.content)],
            }
        )
    counts = usage(h.prompt, 0 if generation.aborted else generation.eval_count) | {"total_tokens": h.total}
    body = response_object(
        echo,
        h.resp,
        model,
        created=h.done,
        completed=h.done,
        status="completed",
        output=output,
        usage=counts,
        stream=False,
    )
    text = dumps(body) + "\n"
    return _Template(text, _uses(text, h), streamed=False, holes=h)


def _stream_template(
    generation: Generation, echo: Echo, model: str, tool_call_error: str, h: _Holes
) -> _Template | None:
    """The stream's frames with holes, or ``None`` for an HTTP 500 (failure before any event)."""
    converter = StreamConverter(echo, model, h.resp, h.msg, h.reasoning, h.fc)
    counts = usage(h.prompt, generation.eval_count) | {"total_tokens": h.total}
    for chunk in generation.chunks:
        converter.process(h.first, chunk.content, chunk.thinking, [], False, counts)
    if generation.error is not None:
        if not converter.frames and not wrong_key(tool_call_error, generation.error):
            return None
        # Ollama's error line decodes as an empty response: the first one still opens the stream.
        converter.process(h.done if not converter.frames else h.first, "", "", [], False, counts)
    elif not generation.aborted:  # the repeat abort: no done response, nothing closes the stream
        calls = []
        if generation.tool_call is not None:
            calls.append((h.call, generation.tool_call.name, generation.tool_call.arguments))
        converter.process(h.done, generation.final_content, generation.final_thinking, calls, True, counts)
    text = _SEP.join(converter.frames)
    extra = tuple(h.reasoning(n) for n in range(1, converter.reasoning_items))
    return _Template(text, _uses(text, h), streamed=True, holes=h, extra=extra)


def _probe(generation: Generation, echo: Echo, model: str, stream: bool) -> str:
    """The texts a reply carries that come from the request or the script: the echoed fields as
    Go writes them (numbers too) and the generation's raw texts (Go's escaping turns a character
    into a backslash sequence, and no placeholder holds a backslash, so a placeholder in the
    written text is one in the raw text)."""
    echoed = response_object(
        echo, "", model, created=0, completed=None, status="", output=[], usage=None, stream=stream
    )
    texts = [
        dumps(echoed),
        generation.final_content,
        generation.final_thinking,
        generation.content,
        generation.thinking,
    ]
    for chunk in generation.chunks:
        texts += (chunk.content, chunk.thinking)
    if generation.tool_call is not None:
        texts += (generation.tool_call.name, generation.tool_call.arguments)
    return "\x1f".join(texts)


def surface_ollama_responses(
    profile: OllamaProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as Ollama's ``/v1/responses`` reply (see the module docstring)."""
    body = request.body
    generation = run(
        completion,
        max_tokens_of(body.get("max_output_tokens")),
        responses_tool_names(body),
        responses_prefill(body),
        profile.token_repeat,
    )
    if not request.stream and generation.error is not None:
        message = UNEXPECTED_ERROR_FORMAT if wrong_key(profile.tool_call_error, generation.error) else generation.error
        return openai_error(500, message)
    echo = Echo(body)
    key = (
        "responses",
        request.stream,
        profile.tool_call_error,
        echo.key,
        request.model,
    )  # the generation is per token_repeat
    template = generation.memo.get(key, False)
    if template is False:
        h = _holes_for(_probe(generation, echo, request.model, request.stream))
        if request.stream:
            template = _stream_template(generation, echo, request.model, profile.tool_call_error, h)
        else:
            template = _full_template(generation, echo, request.model, h)
        if template is not None:
            compiled = _compiled(template.text, template.streamed, h, template.extra)
            template = dataclasses.replace(template, compiled=compiled)
        generation.memo[key] = template  # type: ignore[index]
    if template is None:
        assert generation.error is not None
        return openai_error(500, generation.error)
    reply = _fill(template, generation, profile, ctx)  # type: ignore[arg-type]
    if generation.error is not None:  # streamed, cut short after its first events
        return dataclasses.replace(reply, log=(*reply.log, stream_cut_note(generation.error, "response.completed")))
    if generation.aborted:  # the repeat abort, no error: the stream has no response.completed
        return dataclasses.replace(reply, log=(*reply.log, REPEAT_NOTE))
    return reply
