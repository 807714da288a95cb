"""What a request body must pass before any scenario step is played: the checks of
:class:`~mockoss.server.core.MockServer` that give the error reply of an invalid body (not a JSON
object, schema, lone surrogate, out-of-vocabulary token, Go number, unknown model, an endpoint the
profile lacks), with the kept validations of bodies sent again.

Split out of :mod:`mockoss.server.core` (a pure move): :class:`RequestChecks` is a base class of
``MockServer``, so ``self._validate`` on the request path is the same one method lookup as before
(no wrapper call, no new object between); its methods read the attributes ``MockServer.__post_init__``
sets (``_base_profile``, ``_valid_bodies``, ``served_model_names``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

from pydantic import ValidationError

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony.lru import approx_bytes
from mockoss.jsonbody import parse_json
from mockoss.profiles.base import Profile, Reply
from mockoss.server.content_type import content_type_reply
from mockoss.server.inputs import lone_surrogate_field, out_of_vocabulary
from mockoss.server.nonfinite import go_decode_error
from mockoss.server.records import Endpoint
from mockoss.server.replies import SCENARIO_HEADER, SWITCH_HEADER, _for_endpoint, _model_hint, _pydantic_message
from mockoss.server.validation import validate_request

#: Bytes :meth:`MockServer._validate` may keep of validated bodies sent again (parsed data included).
VALID_BODY_BYTES = 16 * 1024 * 1024
#: Larger bodies are always validated (see :meth:`MockServer._validate`).
VALID_BODY_MAX = 8 * 1024


def _not_an_object(body: Any, raw: bytes | None) -> str:
    """Why a body that is not a dict is refused: not a JSON object, unless it is JSON nested deeper
    than the parser recurses (:func:`mockoss.jsonbody.parse_json` raised ``RecursionError``), which
    is said as such, or unless it holds an integer literal longer than Python converts
    (``sys.get_int_max_str_digits()``, 4300 digits by default: :func:`json.loads` raises
    ``ValueError("Exceeds the limit (4300 digits) for integer string conversion…")``), which is
    said as such too. FastAPI (vLLM, SGLang, the reference server) answers both 400 "There was
    an error parsing the body": Starlette's ``Request.json()`` raises something other than a
    ``JSONDecodeError``, which ``get_request_handler`` turns into that ``HTTPException``
    (fastapi 0.165.0 ``fastapi/routing.py``)."""
    if body is None and raw:
        try:
            parse_json(raw)
        except RecursionError:
            return "the body is nested deeper than the JSON parser allows (Python's recursion limit)"
        except ValueError as exc:
            if not isinstance(exc, json.JSONDecodeError) and "integer string conversion" in str(exc):
                return (
                    f"the body holds an integer of more than {sys.get_int_max_str_digits()} digits, "
                    "which Python's JSON parser refuses (sys.get_int_max_str_digits())"
                )
    return "the body is not a JSON object"


class RequestChecks:
    """The request checks of :class:`~mockoss.server.core.MockServer` (its base class)."""

    def _validate(
        self, endpoint: Endpoint, body: Any, raw: bytes | None = None, base: Profile | None = None
    ) -> Reply | tuple[Profile, Any, str]:
        """The error reply a request gets before any step is played, else (profile, request, model).

        ``body`` is ``json.loads(raw)``, unmodified. A body sent again (the same ``raw`` bytes, to
        the same endpoint, under the same base profile) that passed every check of this method
        but the model's is not validated again: its validated request is kept from its second
        sighting (:attr:`_valid_bodies`, bounded in bytes, emptied by :meth:`reset`). Exact,
        because everything those checks read is the body's bytes and the base profile (the
        schema's validators, the surrogate, vocabulary and Go number checks are functions of the
        body alone), and the request object is only read afterwards (its view, its prompt lookup:
        equal data, as equal bytes parse to equal data). Only bodies of up to
        :data:`VALID_BODY_MAX` bytes: hashing a 23 KB agent turn for the key costs ~4 us, and an
        agent never sends the same turn twice (its resent messages are skipped by the validation's
        own lookup, :mod:`mockoss.harmony.prompt.seen`). Profiles with their own request check
        (``check_request``, which may hand state to the reply: gptoss-reference) always validate.
        The model check reads :attr:`served_model_names`, which can change: it always runs.
        Measured over HTTP (``benchmarks/bench_http.py``'s repeated chat body): see issue 9's note.
        ``base``: the base profile to judge by (default: the server's now).
        """
        if base is None:
            base = self._base_profile
        # A dict body only: the same bytes can fail to parse on a deeper stack (json.loads, past
        # jiter's depth, shares the interpreter's recursion limit), and a kept request must not
        # stand in for a body that is None (a review's finding: an unscripted 500).
        keep = raw is not None and type(body) is dict and len(raw) <= VALID_BODY_MAX
        key = (endpoint, raw)
        if keep and (hit := self._valid_bodies.get(key)) is not None and hit[0] is base:
            return self._with_model(hit[1], hit[2])
        profile = _for_endpoint(base, endpoint)
        if endpoint not in profile.endpoints:
            return profile.route_error(404, "POST", ENDPOINTS[endpoint].path)
        if profile.name.startswith("ollama") and (go_error := go_decode_error(endpoint, body, raw)) is not None:
            return profile.error(400, go_error)  # NaN or 1e400 in a Go number field (mockoss.server.nonfinite)
        own_check = getattr(profile, "check_request", None)  # a profile validating as its server's own models do
        if own_check is not None and (rejected := own_check(endpoint, body, raw)) is not None:
            return rejected  # type: ignore[no-any-return]
        if not isinstance(body, dict):
            own_refusal = getattr(profile, "body_refusal", None)  # FastAPI's answer (vllm-mlx, trtllm)
            if own_refusal is not None and (refused := own_refusal(body, raw)) is not None:
                return refused  # type: ignore[no-any-return]
            return profile.error(400, f"Invalid request: {_not_an_object(body, raw)}")
        try:
            checked_body = body if own_check is None else {key: body[key] for key in ("input", "model", "stream") if key in body}
            if (lenient := getattr(profile, "lenient_body", None)) is not None:
                checked_body = lenient(endpoint, checked_body)  # fields read as their server reads them (llamacpp)
            request = validate_request(ENDPOINTS[endpoint].schema, checked_body)  # long lists a slice at a time
        except ValidationError as exc:
            message, param = _pydantic_message(exc)
            return profile.error(400, message, param=param)
        own_surrogates = own_check is not None or profile.name.startswith("ollama")
        field = None if own_surrogates else lone_surrogate_field(body)
        if field is not None:  # see mockoss.server.inputs
            message = f"Invalid request: {field} holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair): not Unicode text (RFC 8259 section 8.2)"
            return profile.error(400, message, param=field)
        if endpoint == "completions" and (token := out_of_vocabulary(body)) is not None:
            return profile.error(400, f"Token id {token} is out of vocabulary")  # vLLM's words, see mockoss.server.inputs
        if keep and own_check is None:
            # What the request holds, measured (lru.approx_bytes) only when it is stored, on the
            # body's second sighting: 2.3-3.3 KB for a short chat, up to ~25x the bytes for a body
            # of many small containers (a review measured 205 KB for 2,700 empty content parts).
            # A partial, not a lambda: a closure would make ``self`` and ``request`` cells for the
            # whole method, and cost a function object per request.
            kept = self._valid_bodies
            kept.offer(key, (base, profile, request), partial(approx_bytes, request, kept.limit))
        return self._with_model(profile, request)

    def _content_type_check(
        self, endpoint: Endpoint, headers: Mapping[str, str], base: Profile, parsed: bool, raw: bytes = b""
    ) -> Reply | None:
        """The refusal of a server to a body not sent as ``application/json`` (vLLM, SGLang,
        TensorRT-LLM, vllm-mlx, the reference server: :mod:`mockoss.server.content_type`), else
        ``None``. ``headers``: lower-case names; a map without
        ``Content-Type``/``Content-Length``/``Transfer-Encoding`` (an in-process call) is not
        checked. ``parsed``: the body parses as JSON; ``raw``: the body. The request's own switches
        (``X-Mockoss-Switch``, its scenario's ``switches:``: ``strict_content_type``) apply, as to
        its reply: the profile is the one :meth:`warm_target` makes (only off the usual header)."""
        if headers.get("content-type") == "application/json":
            return None  # the usual header: no profile look-up on the request path
        if SWITCH_HEADER in headers or SCENARIO_HEADER in headers or getattr(self.scenario, "switches", None):  # type: ignore[attr-defined]
            own = self.warm_target(headers, make_profile=True)[1]  # type: ignore[attr-defined]
            base = base if own is None else own
        return content_type_reply(_for_endpoint(base, endpoint), endpoint, headers, parsed, raw)

    def _with_model(self, profile: Profile, request: Any) -> Reply | tuple[Profile, Any, str]:
        """``(profile, request, model)`` with the model resolved, or the unknown-model reply."""
        model = request.model or self.served_model_names[0]  # type: ignore[attr-defined]
        if model not in self.served_model_names and profile.model_check:
            return _model_hint(profile.model_not_found(model), model, self.served_model_names)
        return profile, request, model

    def precheck(self, endpoint: Endpoint, raw: bytes) -> Reply | None:
        """The error reply :meth:`respond` gives ``raw`` before any step is played (not a JSON
        object, invalid, unknown model, endpoint the profile lacks), else ``None``. Records nothing."""
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):
            body = None
        checked = self._validate(endpoint, body, raw)
        return checked if isinstance(checked, Reply) else None
