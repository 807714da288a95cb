"""A JSON Schema (draft 2020-12) for scenario files, for editors (completion, checking).

Generated from the pydantic models of :mod:`mockoss.scenario.schema`, with the ``fault`` field
replaced by :func:`mockoss.harmony.faults.fault_json_schema`'s fragment (one branch per kind).
The package ships the result as ``mockoss/scenario/scenario.schema.json`` (tests check that it
is current); ``mockoss schema`` prints it. Point YAML editors at it with a first line such as
``# yaml-language-server: $schema=scenario.schema.json``.

Checks that need code (regexes compile, templates parse, endpoint names exist, exactly one of
``steps``/``rules``) are not expressible here; ``mockoss validate`` runs them.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["SCHEMA_FILE", "scenario_json_schema", "scenario_json_schema_text", "shipped_json_schema_text"]

#: The shipped file, inside the ``mockoss.scenario`` package.
SCHEMA_FILE = "scenario.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, as a dict."""
    from mockoss.harmony.faults import fault_json_schema
    from mockoss.scenario.schema import ScenarioFile

    generated = ScenarioFile.model_json_schema()
    definitions = generated.setdefault("$defs", {})
    definitions["HarmonyFault"] = fault_json_schema()
    fault = definitions["CompletionSpec"]["properties"]["fault"]
    fault["anyOf"] = [{"$ref": "#/$defs/HarmonyFault"}, {"type": "null"}]
    return {
        "$schema": DIALECT,
        "title": "mockoss scenario (version 1)",
        "description": "A mockoss scenario file: rules (or steps) scripting what a fake gpt-oss server answers.",
        **{k: v for k, v in generated.items() if k != "title"},
    }


def scenario_json_schema_text() -> str:
    """:func:`scenario_json_schema` as the shipped file's text (2-space indent, final newline)."""
    return json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"


def shipped_json_schema_text() -> str:
    """The text of the shipped ``scenario.schema.json``."""
    return files("mockoss.scenario").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
