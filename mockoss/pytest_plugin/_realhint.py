"""Real mode's failure hint: a 404 for the model the tests asked for names ``--mockoss-real-model``.

Under ``--mockoss-real URL`` the fixtures give ``mockoss.model`` = ``--mockoss-real-model``, else
``$MOCKOSS_REAL_MODEL``, else ``openai/gpt-oss-20b``. A real server that serves the model under
another name answers 404 (vLLM's ``_check_model``: ``The model `X` does not exist.``; Ollama:
``model "X" not found``; a mockoss stand-in: its own 404 with a hint on how to start *it*). The
sixteenth session's newcomer (item 3) read that 404 and looked for a server flag; the fix is the
test run's own flag. So a failed real-mode test whose report shows a 404 and the model's name gets
a ``mockoss real model`` section naming the flag and the names the server lists
(``GET /v1/models``, asked once per server and run; not asked when the report shows no such 404).
"""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockoss.pytest_plugin._fixture import MockossFixture

__all__ = ["SECTION", "real_model_hint"]

#: The report section's title.
SECTION = "mockoss real model"
#: Longest wait for the server's ``GET /v1/models``, seconds.
LIST_TIMEOUT_S = 5.0

_listed: dict[str, list[str] | None] = {}


def _served(fixture: MockossFixture) -> list[str] | None:
    """The model ids the real server's ``GET /v1/models`` lists (``None``: it could not be read)."""
    if fixture.base_url not in _listed:
        request = urllib.request.Request(
            fixture.base_url + "/models", headers={"Authorization": f"Bearer {fixture.api_key}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=LIST_TIMEOUT_S) as answer:
                data = json.loads(answer.read())["data"]
            _listed[fixture.base_url] = [entry["id"] for entry in data if isinstance(entry.get("id"), str)]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            _listed[fixture.base_url] = None
    return _listed[fixture.base_url]


def real_model_hint(fixture: MockossFixture, report_text: str) -> str | None:
    """The section text for a failed real-mode test whose report (``report_text``) shows a 404
    and ``fixture.model``, unless the server lists that model; else ``None``.

    Example: ``the real server http://h:8000/v1 answered 404 to a test using model
    'openai/gpt-oss-20b', which it does not list (GET /v1/models: 'gpt-oss:20b'). Point the tests
    at the name it serves: pytest --mockoss-real-model gpt-oss:20b (or MOCKOSS_REAL_MODEL=...)``."""
    if not fixture.real or "404" not in report_text or fixture.model not in report_text:
        return None
    served = _served(fixture)
    if served is not None and fixture.model in served:
        return None
    listing = (
        f"it lists {', '.join(map(repr, served))} (GET /v1/models)"
        if served
        else "its GET /v1/models could not be read"
    )
    example = served[0] if served else "NAME"
    return (
        f"the real server {fixture.base_url} answered 404 to a test using model {fixture.model!r}; {listing}. "
        f"The model name comes from this test run, not the server: pytest --mockoss-real-model {example} "
        f"(or MOCKOSS_REAL_MODEL={example})."
    )
