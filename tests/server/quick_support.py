"""What the quick-validation tests (``test_validation_quick*.py``) share: a request's outcome
under a validator, the fields a model or a ``TypedDict`` declares, and the check that the quick
path refuses a body with the model's own errors."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from mockoss.server.validation import validate_request


def outcome(validate: Any, body: dict[str, Any]) -> tuple[Any, ...]:
    try:
        request = validate(body)
    except ValidationError as exc:
        return ("rejected", json.dumps(exc.errors(include_url=False), default=repr))  # ctx holds ValueError objects
    view = request.view("served", body)
    return ("accepted", view)


def fields_of_model(model: Any) -> dict[str, tuple[Any, bool, tuple[Any, ...]]]:
    return {name: (field.annotation, field.is_required(), tuple(field.metadata)) for name, field in model.model_fields.items()}


def fields_of_typed_dict(typed_dict: Any, models: dict[Any, Any]) -> dict[str, tuple[Any, bool, tuple[Any, ...]]]:
    found = {}
    for name, hint in typing.get_type_hints(typed_dict, include_extras=True).items():
        metadata: tuple[Any, ...] = ()
        required = typing.get_origin(hint) is not typing.NotRequired  # (total TypedDicts; __required_keys__
        if not required:  # misses NotRequired under `from __future__ import annotations`, pydantic does not)
            (hint,) = typing.get_args(hint)
        if typing.get_origin(hint) is typing.Annotated:
            hint, *extras = typing.get_args(hint)
            metadata = tuple(m for extra in extras for m in extra.metadata)
        found[name] = (models.get(hint, hint), required, metadata)
    return found


def refusals_agree(model: Any, body: dict[str, Any]) -> list[Any]:
    """Assert that ``validate_request(model, body)`` and ``model.model_validate(body)`` both refuse
    ``body`` with the same errors; return them."""
    with pytest.raises(ValidationError) as quick:
        validate_request(model, body)
    with pytest.raises(ValidationError) as whole:
        model.model_validate(body)
    assert quick.value.errors() == whole.value.errors()
    return quick.value.errors()
