"""``web_search_item``: the order in which SGLang's and TensorRT-LLM's ``parse_output_message``
read a ``browser.*`` call (sgl-project/sglang@2aa2e2d0ffda0a44ed9a022fdd9d5d042f365eee:
python/sglang/srt/entrypoints/harmony_utils.py; NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:
tensorrt_llm/serve/responses_utils.py): JSON first; ``find`` subscripts ``["pattern"]`` before any
``.get``; an unknown action fails without reading the JSON. The expected messages are what this
Python raises for the same expressions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.profiles.base import IdSource
from mockoss.profiles.web_search import web_search_item


class Refused(Exception):
    pass


def _error(recipient: str, text: str) -> str:
    with pytest.raises(Refused) as caught:
        web_search_item(recipient, [text], IdSource(0, 0), Refused)
    return str(caught.value)


def _python(expression: Any) -> str:
    try:
        expression()
    except Exception as exc:  # noqa: BLE001  # the server's own exception, whatever it is
        return str(exc)
    raise AssertionError("no error")


@pytest.mark.parametrize("text", ["[1]", '"s"', "3", "2.5", "true", "null"])
def test_find_with_a_json_value_that_is_not_an_object_fails_at_its_subscript(text: str) -> None:
    value = json.loads(text)
    assert _error("browser.find", text) == _python(lambda: value["pattern"])


@pytest.mark.parametrize("recipient", ["browser.search", "browser.open"])
@pytest.mark.parametrize("text", ["[1]", '"s"', "3", "null"])
def test_search_and_open_fail_at_get(recipient: str, text: str) -> None:
    value = json.loads(text)
    assert _error(recipient, text) == _python(lambda: value.get("query"))


@pytest.mark.parametrize("text", ["[1]", '{"a": 1}', "null"])
def test_an_unknown_action_fails_as_such_whatever_the_json(text: str) -> None:
    assert _error("browser.scroll", text) == "Unknown browser action: browser.scroll"


def test_the_json_is_read_first_and_objects_still_map() -> None:
    assert _error("browser.scroll", "{not json") == _python(lambda: json.loads("{not json"))
    assert _error("browser.find", '{"url": "u"}') == "'pattern'"
    item = web_search_item("browser.find", ['{"pattern": "p", "url": "u"}'], IdSource(0, 0), Refused)
    assert item["action"] == {"pattern": "p", "type": "find", "url": "cursor:u"}
    item = web_search_item("browser.search", ['{"query": "q"}'], IdSource(0, 0), Refused)
    assert item["action"] == {"query": "cursor:q", "type": "search", "sources": None}
