"""mockoss.profiles.memos.held: an entry per the identity of objects, never answered for others.

LM Studio and llama.cpp key their stream templates by ``id()`` of a plan or classification; an
``id()`` can be reused once its object is freed. These tests pin the two things that keep a
reused id from answering with another object's frames: the entry holds its objects (so their ids
stay theirs while it lives), and a found entry holding other objects is rebuilt.
"""

from __future__ import annotations

import gc
import weakref

from mockoss.harmony.completion import Memo
from mockoss.profiles.memos import held


class _Plan:  # weak-referenceable, like the profiles' plans
    pass


def test_built_once_per_objects_and_again_for_others() -> None:
    memo: dict[object, object] = {}
    calls: list[int] = []
    a, b = _Plan(), _Plan()
    build = lambda: calls.append(1) or len(calls)
    assert held(memo, ("t",), (a,), build) == 1
    assert held(memo, ("t",), (a,), build) == 1
    assert held(memo, ("t",), (b,), build) == 2
    assert held(memo, ("u",), (a,), build) == 3  # another key part, another entry


def test_an_entry_holding_another_object_under_the_same_id_is_rebuilt() -> None:
    """What a reused ``id()`` would look like: the key matches, the held object is not this one."""
    plan, other = _Plan(), _Plan()
    memo: dict[object, object] = {("t", id(plan)): ((other,), "frames of another plan")}
    assert held(memo, ("t",), (plan,), lambda: "frames of this plan") == "frames of this plan"
    assert memo[("t", id(plan))] == ((plan,), "frames of this plan")


def test_the_entry_keeps_its_objects_alive_until_dropped() -> None:
    memo = Memo()
    plan = _Plan()
    ref = weakref.ref(plan)
    held(memo, ("t",), (plan,), lambda: b"frames")
    del plan
    gc.collect()
    assert ref() is not None, "the entry must hold its plan, or the plan's id could be reused while the key stands"
    memo.clear()
    gc.collect()
    assert ref() is None


def test_no_memo_builds_every_time() -> None:
    calls: list[int] = []
    plan = _Plan()
    for _ in range(2):
        held(None, ("t",), (plan,), lambda: calls.append(1))
    assert len(calls) == 2
