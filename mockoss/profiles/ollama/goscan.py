"""Go's JSON scanner (``encoding/json/scanner.go``): is a text valid JSON, and if not, Go's exact
``SyntaxError`` message (``invalid character 'l' looking for beginning of value``).

Ollama reports tool-call arguments that fail to decode with this text
(``error parsing tool call: raw='ls -R\\n', err=invalid character 'l' looking for beginning of
value``, continuedev/continue#10221), so the mock reproduces the scanner state by state. Source read,
not copied: Go ``encoding/json/scanner.go``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["syntax_error"]


_SPACE = frozenset(b" \t\r\n")
_MAX_DEPTH = 10000
_SHORT_QUOTES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 0x5C: "\\\\"}
_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")


def _quote_char(byte: int) -> str:
    """Go's ``quoteChar``: the offending byte as ``SyntaxError`` shows it (``'l'``, ``'\\n'``,
    ``'\\x01'``, ``'Ã'`` for the lead byte 0xC3 of a UTF-8 sequence, ``'\\u0085'``)."""
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    if byte in _SHORT_QUOTES:
        return f"'{_SHORT_QUOTES[byte]}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    if 0x80 <= byte <= 0xA0 or byte == 0xAD:  # not printable to strconv.IsPrint
        return f"'\\u{byte:04x}'"
    return f"'{chr(byte)}'"


class _Scan:
    """A byte-at-a-time port of the states of Go's JSON scanner (one method per state)."""

    __slots__ = ("end_top", "error", "stack", "step")

    OBJECT_KEY, OBJECT_VALUE, ARRAY_VALUE = range(3)

    def __init__(self) -> None:
        self.step = self.begin_value
        self.stack: list[int] = []
        self.end_top = False
        self.error: str | None = None

    def fail(self, byte: int, context: str) -> None:
        self.step = self.stop
        self.error = f"invalid character {_quote_char(byte)} {context}"

    def stop(self, byte: int) -> None:
        pass

    def push(self, byte: int, state: int, then: Any) -> None:
        self.stack.append(state)
        if len(self.stack) <= _MAX_DEPTH:
            self.step = then
        else:
            self.fail(byte, "exceeded max depth")

    def pop(self) -> None:
        self.stack.pop()
        if self.stack:
            self.step = self.end_value
        else:
            self.step = self.end_top_value
            self.end_top = True

    # values
    def begin_value_or_empty(self, byte: int) -> None:
        if byte in _SPACE:
            return
        if byte == 0x5D:  # ]
            self.end_value(byte)
            return
        self.begin_value(byte)

    def begin_value(self, byte: int) -> None:
        if byte in _SPACE:
            return
        if byte == 0x7B:  # {
            self.push(byte, self.OBJECT_KEY, self.begin_string_or_empty)
        elif byte == 0x5B:  # [
            self.push(byte, self.ARRAY_VALUE, self.begin_value_or_empty)
        elif byte == 0x22:
            self.step = self.in_string
        elif byte == 0x2D:  # -
            self.step = self.negative
        elif byte == 0x30:
            self.step = self.zero
        elif 0x31 <= byte <= 0x39:
            self.step = self.digits
        elif byte in (0x74, 0x66, 0x6E):  # t f n
            self.step = self.literal({0x74: "true", 0x66: "false", 0x6E: "null"}[byte], 1)
        else:
            self.fail(byte, "looking for beginning of value")

    def begin_string_or_empty(self, byte: int) -> None:
        if byte in _SPACE:
            return
        if byte == 0x7D:  # }
            self.stack[-1] = self.OBJECT_VALUE
            self.end_value(byte)
            return
        self.begin_string(byte)

    def begin_string(self, byte: int) -> None:
        if byte in _SPACE:
            return
        if byte == 0x22:
            self.step = self.in_string
        else:
            self.fail(byte, "looking for beginning of object key string")

    def end_value(self, byte: int) -> None:
        if not self.stack:
            self.step = self.end_top_value
            self.end_top = True
            self.end_top_value(byte)
            return
        if byte in _SPACE:
            self.step = self.end_value
            return
        state = self.stack[-1]
        if state == self.OBJECT_KEY:
            if byte == 0x3A:  # :
                self.stack[-1] = self.OBJECT_VALUE
                self.step = self.begin_value
            else:
                self.fail(byte, "after object key")
        elif state == self.OBJECT_VALUE:
            if byte == 0x2C:  # ,
                self.stack[-1] = self.OBJECT_KEY
                self.step = self.begin_string
            elif byte == 0x7D:
                self.pop()
            else:
                self.fail(byte, "after object key:value pair")
        elif byte == 0x2C:
            self.step = self.begin_value
        elif byte == 0x5D:
            self.pop()
        else:
            self.fail(byte, "after array element")

    def end_top_value(self, byte: int) -> None:
        if byte not in _SPACE:
            self.fail(byte, "after top-level value")

    # strings
    def in_string(self, byte: int) -> None:
        if byte == 0x22:
            self.step = self.end_value
        elif byte == 0x5C:
            self.step = self.in_escape
        elif byte < 0x20:
            self.fail(byte, "in string literal")

    def in_escape(self, byte: int) -> None:
        if byte in b'bfnrt\\/"':
            self.step = self.in_string
        elif byte == 0x75:  # u
            self.step = self.unicode_escape(4)
        else:
            self.fail(byte, "in string escape code")

    def unicode_escape(self, remaining: int) -> Any:
        def step(byte: int) -> None:
            if byte not in _HEX:
                self.fail(byte, "in \\u hexadecimal character escape")
            elif remaining == 1:
                self.step = self.in_string
            else:
                self.step = self.unicode_escape(remaining - 1)

        return step

    # numbers
    def negative(self, byte: int) -> None:
        if byte == 0x30:
            self.step = self.zero
        elif 0x31 <= byte <= 0x39:
            self.step = self.digits
        else:
            self.fail(byte, "in numeric literal")

    def digits(self, byte: int) -> None:
        if byte in _DIGITS:
            return
        self.zero(byte)

    def zero(self, byte: int) -> None:
        if byte == 0x2E:  # .
            self.step = self.dot
        elif byte in (0x65, 0x45):  # e E
            self.step = self.exponent
        else:
            self.end_value(byte)

    def dot(self, byte: int) -> None:
        if byte in _DIGITS:
            self.step = self.fraction
        else:
            self.fail(byte, "after decimal point in numeric literal")

    def fraction(self, byte: int) -> None:
        if byte in _DIGITS:
            return
        if byte in (0x65, 0x45):
            self.step = self.exponent
        else:
            self.end_value(byte)

    def exponent(self, byte: int) -> None:
        if byte in (0x2B, 0x2D):  # + -
            self.step = self.exponent_sign
            return
        self.exponent_sign(byte)

    def exponent_sign(self, byte: int) -> None:
        if byte in _DIGITS:
            self.step = self.exponent_digits
        else:
            self.fail(byte, "in exponent of numeric literal")

    def exponent_digits(self, byte: int) -> None:
        if byte not in _DIGITS:
            self.end_value(byte)

    # true / false / null
    def literal(self, word: str, position: int) -> Any:
        def step(byte: int) -> None:
            expected = ord(word[position])
            if byte != expected:
                self.fail(byte, f"in literal {word} (expecting {_quote_char(expected)})")
            elif position + 1 == len(word):
                self.step = self.end_value
            else:
                self.step = self.literal(word, position + 1)

        return step


def syntax_error(text: str) -> str | None:
    """Go's ``checkValid`` over ``text`` (as UTF-8): the ``SyntaxError`` text, else ``None``.

    Covers every scanner message: ``invalid character 'x' looking for beginning of value``,
    ``… looking for beginning of object key string``, ``… after object key``, ``… after object
    key:value pair``, ``… after array element``, ``… after top-level value``, ``… in string
    literal``, ``… in string escape code``, ``… in \\u hexadecimal character escape``, ``… in
    numeric literal``, ``… after decimal point in numeric literal``, ``… in exponent of numeric
    literal``, ``… in literal true (expecting 'r')`` (and ``false``/``null``), ``… exceeded max
    depth``, and ``unexpected end of JSON input``. Like Go's ``eof()``, the end of the text is
    read as a space, so ``-`` fails with ``invalid character ' ' in numeric literal`` and ``tr``
    with ``invalid character ' ' in literal true (expecting 'u')``.
    """
    scan = _Scan()
    for byte in text.encode("utf-8", "surrogatepass"):
        scan.step(byte)
        if scan.error is not None:
            return scan.error
    if scan.end_top:
        return None
    scan.step(0x20)  # Go's eof() feeds a space: it ends a top-level number, or fails mid-literal
    if scan.error is not None:
        return scan.error  # e.g. "invalid character ' ' in numeric literal" for "-"
    if scan.end_top:
        return None
    return "unexpected end of JSON input"
