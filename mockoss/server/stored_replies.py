"""What the server keeps of a Responses reply it answered from the scenario, under its lock.

Two things, both per server and emptied by ``MockServer.reset`` with the player:

* the reply's id, for ``previous_response_id`` (:meth:`Player.remember
  <mockoss.scenario.player.Player.remember>`: which session and turn it continues), unless the
  request said ``store: false``;
* what a profile kept of the response itself (``gptoss-reference``: the turns a continuation gets,
  :mod:`mockoss.profiles.gptoss_ref.store`), written by the profile into
  :attr:`RequestContext.kept <mockoss.profiles.base.RequestContext.kept>` while it made the reply,
  and dropped here again when the scripted transport never delivers the reply's end
  (:func:`delivered_whole`).

Why the second: openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py keeps a response in
``StreamResponsesEvents.run``, the event generator, after its token loop and just before it yields
``response.completed`` (``store_callback``); the loop stops at the first token after
``request.is_disconnected()``, and then neither the final response nor the store is made. The same
generator answers a non-streamed request (``async for event in event_stream.run()``, the
response written once it ends). So a connection gone before the end stores nothing: a stream cut
(``disconnect_after_frames``, ``disconnect_after_ms``, a ``forever`` stall, all before the last
frame) or ended early (``truncate_after_frames`` before the last frame), a non-streamed reply whose
``disconnect_after_ms`` comes before its body is due. A stream dropped after all its frames, a
non-streamed reply dropped after its headers (``disconnect_after_frames: 0``: the server had
finished, and FastAPI sends headers and body together) and a malformed frame (written, only
garbled) keep it. What a scripted cut cannot say: a real client that gives up mid-stream, unscripted
(mockoss made the reply and kept it under the lock, before the first byte went out); and an entry
the cut reply's own entry pushed out of the byte bound stays forgotten.
"""

from __future__ import annotations

from typing import Any

from mockoss.profiles.base import Reply
from mockoss.scenario.conversation import response_id
from mockoss.scenario.player import Played, Player
from mockoss.server.transport import Delivery, build_schedule

__all__ = ["delivered_whole", "remember_reply"]


def delivered_whole(reply: Reply, delivery: Delivery | None) -> bool:
    """Whether ``reply``, delivered as ``delivery`` says (``None``: at once, as is), reaches its
    end with the connection up: a stream's every frame written (:func:`build_schedule
    <mockoss.server.transport.build_schedule>` with one frame per write, so that its writes count
    its frames), a non-streamed body due before any ``disconnect_after_ms`` (a drop after the
    headers, ``disconnect_after_frames`` 0 or below, comes after the server finished). Pure: the
    same schedule the HTTP layer builds, from the same seed and index."""
    if delivery is None:
        return True
    spec = delivery.spec
    if reply.streamed:
        probe = spec.model_copy(update={"frames_per_write": 1, "split_special": False})
        return len(build_schedule(reply, probe, delivery.seed, delivery.index).times) == len(reply.frames)
    if spec.disconnect_after_ms is None or (
        spec.disconnect_after_frames is not None and spec.disconnect_after_frames <= 0
    ):
        return True
    return bool(build_schedule(reply, spec, delivery.seed, delivery.index, tokens=delivery.tokens).times)


def remember_reply(player: Player, played: Played, reply: Reply, body: Any, delivery: Delivery | None) -> None:
    """After a 200 Responses reply the player played: its id remembered for
    ``previous_response_id`` unless the request said ``store: false``; the profile's kept entry
    under that id forgotten again when the delivery never reaches the reply's end (module
    docstring). Call it under the server lock."""
    if isinstance(body, dict) and body.get("store") is False:
        return  # (nothing was kept either: a profile keeps a response only for store: true)
    found = response_id(reply.body, reply.frames)
    if found is None:
        return
    if delivery is not None and player.kept.get(found) is not None and not delivered_whole(reply, delivery):
        player.kept.forget(found)  # (a reply nothing was kept for costs no schedule)
    player.remember(found, played)
