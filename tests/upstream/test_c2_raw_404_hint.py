"""Raw mode's 502 for an upstream 404 to ``POST /v1/completions`` names ``--upstream-model`` only
where setting it helps (eighteenth session, task C2 item 2; ``mockoss.upstream.raw._not_found``).

The sixteenth session's newcomer (item 3) got the 404 wrapped with no hint, and the hint added
then (``start mockoss with --upstream-model NAME``) was shown to a user who had set that flag,
and for a 404 that was about the route, not the model. The "real" upstreams here are mockoss
servers on loopback: the ``vllm`` profile answers a model it does not serve with vLLM's 404 (``The
model `X` does not exist.``), the ``ollama`` profile has no ``/v1/completions`` route.
"""

from __future__ import annotations

from upstream_helpers import CHAT, completion_step, scenario

from mockoss.server.core import MockServer
from mockoss.upstream import Upstream
from mockoss.upstream.raw import _not_found

HINT = "start mockoss with --upstream-model NAME"


def _message(serve, http, upstream_url: str, **options) -> str:
    proxy = serve(MockServer(upstream=Upstream(upstream_url, mode="raw", **options)))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 502
    return reply.json()["error"]["message"]


def test_the_hint_names_the_flag_when_it_is_unset_and_the_model_is_not_served(serve, http):
    backend = serve(MockServer(scenario=scenario(completion_step()), served_model_names=["gpt-oss-120b"]))
    message = _message(serve, http, backend.url)
    assert "The model `openai/gpt-oss-20b` does not exist." in message  # the upstream's words
    assert message.endswith(f"(mockoss sent model 'openai/gpt-oss-20b'; to send the name the upstream serves, {HINT})")


def test_the_hint_does_not_tell_a_user_who_set_the_flag_to_set_it(serve, http):
    backend = serve(MockServer(scenario=scenario(completion_step())))  # serves openai/gpt-oss-20b
    message = _message(serve, http, backend.url, model="gpt-oss-20b")
    assert "The model `gpt-oss-20b` does not exist." in message
    assert "--upstream-model NAME" not in message  # before: the same hint as when it is unset
    assert message.endswith(
        "(mockoss sent model 'gpt-oss-20b', as --upstream-model says: "
        "the upstream's GET /v1/models lists the names it serves)"
    )


def test_a_404_that_does_not_name_the_model_is_about_the_route(serve, http):
    ollama = serve(MockServer(profile="ollama", scenario=scenario(completion_step())))  # no /v1/completions
    for options in ({}, {"model": "gpt-oss:20b"}):
        message = _message(serve, http, ollama.url, **options)
        assert "answered HTTP 404 to POST /v1/completions" in message
        assert "--upstream-model" not in message  # no model flag would help
        assert message.endswith(
            "which the answer does not name: is --upstream the server's root URL, "
            "and does the server have POST /v1/completions?)"
        )


def test_a_json_escaped_name_counts_as_named():
    content = b'{"model": "gpt\\"oss", "prompt": []}'
    message = _not_found('{"detail": "The model `gpt\\"oss` does not exist."}', content, False)
    assert message.endswith(f"(mockoss sent model 'gpt\"oss'; to send the name the upstream serves, {HINT})")
