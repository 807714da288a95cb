"""The expression language inside a template's ``{{ … }}``: tokens, literals, paths, Faker calls, filters.

Split from :mod:`mockoss.scenario.template` (whose docstring documents the syntax). One job: the
text between ``{{`` and ``}}`` → an :class:`_Expr` (what to render), or :class:`TemplateError`
naming the template and the problem. Nothing here evaluates or renders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.scenario.fakers import FAKER_PROVIDERS

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"""
    r"""|(?P<name>[A-Za-z_]\w*)|(?P<op>[.\[\](),=|]))"""
)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
_WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class TemplateError(ValueError):
    """A template in a scenario cannot be parsed or names something not allowed.

    Raised when a scenario loads; ``str()`` quotes the template and says what is wrong, e.g.
    ``template '{{ faker.citi }}': unknown Faker provider 'citi'; allowed: address, …``.
    """



@dataclass(frozen=True, slots=True)
class _Expr:
    source: str
    kind: str  # "faker", "request" or "literal"
    target: Any  # provider name, path tuple, or the literal value
    kwargs: tuple[tuple[str, Any], ...] = ()
    filters: tuple[tuple[str, Any], ...] = ()



class _Parser:
    def __init__(self, source: str, inner: str) -> None:
        self.source = source
        self.tokens: list[tuple[str, Any]] = []
        position = 0
        inner = inner.rstrip()
        while position < len(inner):
            match = _TOKEN.match(inner, position)
            if match is None or match.end() == position:
                self.fail(f"unexpected {inner[position:].strip()[:20]!r}")
            kind = match.lastgroup or ""
            text = match.group(kind)
            self.tokens.append((kind, _string(text, self) if kind == "str" else text))
            position = match.end()
        self.position = 0

    def fail(self, problem: str) -> Any:
        raise TemplateError(f"template {self.source!r}: {problem}")

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> Any:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            wanted = repr(value) if value else {"name": "a name", "str": "a string"}.get(kind, kind)
            found = "the end" if token is None else repr(token[1])
            self.fail(f"expected {wanted}, found {found}")
        self.position += 1
        return token[1]  # type: ignore[index]

    def at(self, value: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] == value

    def literal(self) -> Any:
        token = self.peek()
        if token is None:
            return self.fail("expected a literal, found the end")
        kind, text = token
        self.position += 1
        if kind == "str":
            return text
        if kind == "num":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "name" and text in _WORDS:
            return _WORDS[text]
        return self.fail(f"expected a literal (string, number, true, false, null), found {text!r}")

    def expression(self) -> _Expr:
        token = self.peek()
        if token is None:
            return self.fail("empty expression")
        if token[0] == "str":
            self.position += 1
            expr = _Expr(self.source, "literal", token[1])
        else:
            root = self.take("name")
            if root == "faker":
                expr = self.faker_call()
            elif root == "request":
                expr = _Expr(self.source, "request", self.path())
            else:
                expr = self.fail(f"unknown name {root!r}; an expression starts with faker., request or a string")
        filters = []
        while self.at("|"):
            self.position += 1
            name = self.take("name")
            if name == "json":
                filters.append(("json", None))
            elif name == "default":
                self.take("op", "(")
                filters.append(("default", self.literal()))
                self.take("op", ")")
            else:
                self.fail(f"unknown filter {name!r}; filters: json, default(VALUE)")
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return _Expr(self.source, expr.kind, expr.target, expr.kwargs, tuple(filters))

    def path(self) -> tuple[str | int, ...]:
        steps: list[str | int] = []
        while self.at(".") or self.at("["):
            if self.take("op") == ".":
                steps.append(self.take("name"))
                continue
            key = self.literal()
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                self.fail(f"an index is an integer or a string, not {key!r}")
            steps.append(key)
            self.take("op", "]")
        if not steps:
            self.fail("'request' needs a field, e.g. request.model or request.messages[-1].content")
        return tuple(steps)

    def faker_call(self) -> _Expr:
        self.take("op", ".")
        name = self.take("name")
        allowed = FAKER_PROVIDERS.get(name)
        if allowed is None:
            self.fail(f"unknown Faker provider {name!r}; allowed: {', '.join(sorted(FAKER_PROVIDERS))}")
        kwargs: dict[str, Any] = {}
        if self.at("("):
            self.position += 1
            while not self.at(")"):
                key = self.take("name")
                self.take("op", "=")
                kwargs[key] = self.argument(name, allowed, key)  # type: ignore[arg-type]
                if not self.at(")"):
                    self.take("op", ",")
            self.take("op", ")")
        return _Expr(self.source, "faker", name, tuple(kwargs.items()))

    def argument(self, provider: str, allowed: Mapping[str, tuple[Any, ...]], key: str) -> Any:
        rule = allowed.get(key)
        if rule is None:
            valid = ", ".join(allowed) or "none"
            self.fail(f"faker.{provider} takes no argument {key!r}; arguments: {valid} (keyword, literal)")
        value = self.literal()
        kind = rule[0]  # type: ignore[index]
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if ok and len(rule) == 3:  # type: ignore[arg-type]
            ok = rule[1] <= value <= rule[2]  # type: ignore[index]
        if not ok:
            name = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[kind]
            bounds = f" from {rule[1]} to {rule[2]}" if len(rule) == 3 else ""  # type: ignore[arg-type, index]
            self.fail(f"faker.{provider}({key}=…): expected {name}{bounds}, got {value!r}")
        return value


def _string(text: str, parser: _Parser) -> str:
    body = text[1:-1]

    def unescape(match: re.Match[str]) -> str:
        char = match.group(1)
        if char not in _ESCAPES:
            parser.fail(f"unknown escape \\{char} in a string; escapes: \\n \\t \\\\ \\\" \\'")
        return _ESCAPES[char]

    return re.sub(r"\\(.)", unescape, body)
