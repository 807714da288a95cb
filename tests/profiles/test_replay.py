"""mockoss.profiles.replay: templates cut at id and value markers give the bytes a direct build
with the same ids and values gives (issue 9: long answers' replies memoised per request shape)."""

from __future__ import annotations

import json

from mockoss.profiles.base import IdSource
from mockoss.profiles.replay import ASCII, AsciiIdRecorder, FramesTemplate, IdRecorder, Template, new_id, templatable
from mockoss.profiles.wire import dumps


def _short(ids) -> str:
    return ids.next()[:8]


def _build(ids, model, usage):
    """A stream as a profile writes it: ids inside JSON strings and raw, a function's id, a
    request value as a JSON value (quoted marker) and raw text, frames with 0, 1 and 3 markers."""
    rid = ids.next("resp_")
    frames = ["data: plain\n\n", f"data: {dumps({'id': rid, 'delta': 'é'})}\n\n", f"event: x\ndata: {rid}\n\n"]
    call = "call_" + (ids.call(_short) if isinstance(ids, IdRecorder) else _short(ids))
    frames.append(f"data: {dumps({'id': rid, 'call': call, 'model': model, 'usage': usage})}\n\n")
    frames.append(f"data: {json.dumps({'d': ids.digits(6), 'n': ids.next16('x')})}\n\n")  # ASCII-escaping encoder
    return frames


def test_frames_filled_equal_the_direct_build():
    recorder = IdRecorder()
    template = FramesTemplate(_build(recorder, recorder.value("model"), recorder.value("usage")))
    for request in range(3):
        model, usage = "m\u00e9\"x", {"prompt_tokens": request}
        values = {"model": dumps(model).encode(), "usage": dumps(usage).encode()}
        filled = template.fill(IdRecorder.replay(recorder.frozen(), IdSource(7, request), values))
        assert filled == [frame.encode() for frame in _build(IdSource(7, request), model, usage)]


def test_prefix_and_suffix_go_around_every_frame():
    recorder = IdRecorder()
    template = FramesTemplate(["a", f"b{recorder.next('p_')}c", "d"])
    ids = IdRecorder.replay(recorder.frozen(), IdSource(1, 1))
    assert template.fill(ids, prefix=b"<", suffix=b">") == [b"<a>", b"<b" + ids[0] + b"c>", b"<d>"]


def test_a_text_template_and_an_unsplit_one():
    recorder = IdRecorder()
    text = dumps({"a": recorder.next(), "b": [recorder.value("v")]})
    ids = IdRecorder.replay(recorder.frozen(), IdSource(3, 4), {"v": b"{}"})
    assert json.loads(Template(text).fill(ids)) == {"a": ids[0].decode(), "b": [{}]}
    assert Template(text, split=False).fill(ids) == text.encode()
    assert FramesTemplate([text], split=False).fill(ids) == [text.encode()]


def test_templatable():
    assert templatable("an answer") and not templatable("a mockoss-id:1 text")


def test_sparse_draws_skip_the_ids_a_reply_does_not_show():
    """SGLang draws an id per decode step and shows a few: the shown ones are drawn at their
    positions, the others skipped, and the source ends where drawing them all leaves it."""
    def build(ids):
        drawn = [ids.next("rs_") for _ in range(50)]
        return dumps({"a": drawn[3], "b": drawn[3], "c": drawn[41], "n": ids.next16("x")})
    recorder = IdRecorder()
    template = Template(build(recorder))
    draws = recorder.sparse(template.slots)
    assert [n for n, _ in draws.shown] == [3, 41, 50]  # the marker numbers shown, in order
    source, direct = IdSource(5, 2), IdSource(5, 2)
    assert template.fill(draws.replay(source)) == build(direct).encode()
    assert source.next() == direct.next()
    recorder.call(lambda ids: ids.next())  # a function's draws cannot be counted: not skippable
    try:
        recorder.sparse(())
    except ValueError:
        pass
    else:
        raise AssertionError("a function call was taken for one draw")


def test_frames_template_used_lists_the_markers_held():
    recorder = IdRecorder()
    frames = ["p", f"a{recorder.next()}", f"{recorder.next()}b{recorder.next()}{recorder.next()}"]
    assert FramesTemplate(frames).used == (0, 1, 2, 3)


def test_ascii_markers_keep_every_offset_and_fill_like_the_direct_build():
    """AsciiIdRecorder's ids are as long as real ones and ASCII (the vLLM Responses stream cuts
    frames at offsets known for 32-character ASCII ids); filled, the bytes are the direct build's."""
    def build(ids):
        item, call = ids.next("msg_"), ids.next()
        return [f"data: {dumps({'id': item, 'd': 'é'})}\n\n", "plain", f"{item}/call_{call}/{item}", f"x{item}"]
    recorder = AsciiIdRecorder()
    built, direct = build(recorder), build(IdSource(9, 1))
    assert [len(frame.encode()) for frame in built] == [len(frame.encode()) for frame in direct]
    assert all(frame.isascii() for frame in built[1:])
    ids = IdRecorder.replay(recorder.frozen(), IdSource(9, 1))
    assert FramesTemplate(built, marks=ASCII).fill(ids) == [frame.encode() for frame in direct]
    assert Template(built[2], marks=ASCII).fill(ids) == direct[2].encode()
    assert FramesTemplate(built).fill(ids) == [frame.encode() for frame in built]  # NUL marks: none found


def test_frames_of_groups_interleaved_keep_their_order():
    recorder = IdRecorder()
    frames = [f"{i}{recorder.next() if i % 3 else ''}{recorder.next() if i % 5 == 1 else ''}" for i in range(40)]
    ids = IdRecorder.replay(recorder.frozen(), IdSource(2, 2))
    want = [frame.encode() for frame in frames]
    for n, value in enumerate(ids):
        want = [frame.replace(f"\x00mockoss-id:{n}\x00".encode(), value) for frame in want]
    assert FramesTemplate(frames).fill(ids) == want


def test_new_id_cuts_an_id_or_records_the_cut():
    def build(ids):
        return dumps({"id": new_id(ids, "call_", 13), "rid": new_id(ids, "chatcmpl-")})
    recorder = IdRecorder()
    template = Template(build(recorder))
    assert template.fill(IdRecorder.replay(recorder.frozen(), IdSource(4, 0))) == build(IdSource(4, 0)).encode()
    assert len(json.loads(build(IdSource(4, 0)))["id"]) == 13
