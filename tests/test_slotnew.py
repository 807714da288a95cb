"""mockoss.slotnew: the request path's builders of frozen slotted dataclasses make the very objects
the classes' own ``__init__`` makes, and refuse classes they could not build the same way."""

from __future__ import annotations

import dataclasses

import pytest

from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ToolDecl
from mockoss.server.records import RecordedRequest
from mockoss.slotnew import slot_builder


@pytest.mark.parametrize("values", [
    (Reply, (200, "application/json", b"{}", (), (("retry-after", "1"),), None, ("a log line",))),
    (ChatRequestView, ("m", (ToolDecl("function", "f"),), "auto", False, True, False, True, 5, {"model": "m"})),
    (RequestContext, (IdSource(0, 3), 1767225600, 12, b"{}", None)),  # kept: None
    (RecordedRequest, (3, "chat", b"{}", (("host", "h"),), "s", 1, 200, "text", "#1", 2, None, ("w",), False, ("log",))),
])
def test_a_built_object_is_the_one_the_class_builds(values):
    cls, args = values
    built, expected = slot_builder(cls)(*args), cls(*args)
    assert type(built) is cls and built == expected and repr(built) == repr(expected)
    assert all(getattr(built, f.name) is getattr(expected, f.name) for f in dataclasses.fields(cls))
    with pytest.raises(dataclasses.FrozenInstanceError):  # still frozen
        built.__setattr__(dataclasses.fields(cls)[0].name, None)
    with pytest.raises(TypeError):  # every field, no more
        slot_builder(cls)(*args[:-1])


def test_classes_it_cannot_build_the_same_way_are_refused():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    for cls in (NoSlots, PostInit, Derived, int):
        with pytest.raises(TypeError):
            slot_builder(cls)
