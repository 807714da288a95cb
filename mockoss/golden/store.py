"""Read and write golden files: one JSON file per case, ``tests/golden/<server>-<version>/<case-id>.json``.

A golden file holds what one real server answered for one case (:mod:`mockoss.golden.cases`),
already normalised (:mod:`mockoss.golden.normalise`)::

    {"header": {"server": "vllm", "version": "0.32.0", "harmony_library": "oss-harmony 0.0.11",
                "level": "http-server", "generator": "tools/goldens/vllm_http.py", "format": 1, …},
     "case": "scenario-clean-tool-call-0",
     "completion": {"text": "<|channel|>…", "tokens": [200005, …]},
     "exchanges": [{"id": "chat-stream-tools", "endpoint": "/v1/chat/completions", "stream": true,
                    "request": {…}, "status": 200, "frames": ["data: {…}", …, "data: [DONE]"]},
                   {"id": "chat-nostream-tools", …, "status": 200, "body": {…}}, …]}

The header may carry more keys: ``profile`` (the mockoss profile and switches that stand for the
release), ``server_flags`` (the server's command-line flags; the comparison emulates those that
change answers, e.g. ``--max-model-len``), ``covers`` (the exchange kinds the level covers),
``source`` (where the server's code came from). Files are written with sorted-free, indented JSON and a final newline so that a diff of two
generations reads line by line. The format is issue 8's (its notes
describe it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockoss.golden.cases import Case, Exchange
from mockoss.golden.normalise import normalise_body, normalise_frames

__all__ = [
    "FORMAT",
    "GoldenExchange",
    "GoldenFile",
    "GoldenFormatError",
    "golden_dirs",
    "read_golden",
    "read_golden_dir",
    "record_exchange",
    "write_golden",
]

#: The ``format`` written into every header.
FORMAT = 1
_HEADER_KEYS = ("server", "version", "harmony_library", "level", "generator", "format")


class GoldenFormatError(ValueError):
    """A golden file does not follow the format; ``str()`` names the file and the field."""


@dataclass(frozen=True, slots=True)
class GoldenExchange:
    """One recorded exchange.

    Attributes:
        id, endpoint, stream, request: as in :class:`mockoss.golden.cases.Exchange`.
        status: the HTTP status the server answered.
        body: the normalised JSON body (non-streamed answers and error answers), else ``None``.
        frames: the normalised SSE frames of a streamed answer, else ``None``.
        note: what the generator observed beyond the bytes; a stream the server cut (an
            incomplete chunked body) says ``connection dropped after frame N``, which the
            comparison matches with mockoss's ``Reply.abort``.
    """

    id: str
    endpoint: str
    stream: bool
    request: dict[str, Any]
    status: int
    body: Any = None
    frames: list[str] | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "endpoint": self.endpoint,
            "stream": self.stream,
            "request": self.request,
            "status": self.status,
        }
        if self.frames is not None:
            out["frames"] = self.frames
        else:
            out["body"] = self.body
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True, slots=True)
class GoldenFile:
    """A parsed golden file (see the module docstring); ``path`` is where it was read from."""

    header: dict[str, Any]
    case: str
    completion: dict[str, Any]
    exchanges: tuple[GoldenExchange, ...]
    path: Path | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "header": self.header,
            "case": self.case,
            "completion": self.completion,
            "exchanges": [e.to_json() for e in self.exchanges],
        }


def record_exchange(
    exchange: Exchange,
    status: int,
    *,
    body: bytes | str | None = None,
    frames: Sequence[str | bytes] | None = None,
    note: str | None = None,
) -> GoldenExchange:
    """A :class:`GoldenExchange` from what a server answered, normalised here.

    Pass ``frames`` (the SSE frames, split, e.g. by :func:`mockoss.golden.normalise.split_sse`) for
    a streamed answer with status 200, else ``body`` (the raw bytes).
    """
    if frames is not None:
        return GoldenExchange(exchange.id, exchange.endpoint, exchange.stream, exchange.request, status,
                              frames=normalise_frames(list(frames)), note=note)
    return GoldenExchange(exchange.id, exchange.endpoint, exchange.stream, exchange.request, status,
                          body=normalise_body(body or b""), note=note)


def write_golden(
    directory: str | Path, header: Mapping[str, Any], case: Case, recorded: Sequence[GoldenExchange]
) -> Path:
    """Write ``<directory>/<case.id>.json`` and return its path (the directory is created).

    Raises:
        GoldenFormatError: the header lacks one of ``server``, ``version``, ``harmony_library``,
            ``level``, ``generator``.
    """
    head = {"format": FORMAT, **header}
    missing = [key for key in _HEADER_KEYS if key not in head]
    if missing:
        raise GoldenFormatError(f"header: missing {', '.join(missing)}")
    ordered = {key: head[key] for key in _HEADER_KEYS} | {k: v for k, v in head.items() if k not in _HEADER_KEYS}
    golden = GoldenFile(
        header=ordered,
        case=case.id,
        completion={"text": case.completion.text, "tokens": list(case.completion.tokens)},
        exchanges=tuple(recorded),
    )
    path = Path(directory) / f"{case.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(golden.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise GoldenFormatError(f"{where}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise GoldenFormatError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
    return value


def read_golden(path: str | Path) -> GoldenFile:
    """Read one golden file.

    Raises:
        GoldenFormatError: not JSON, or a field missing or of the wrong type (file and field named).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise GoldenFormatError(f"{path}: not JSON: {exc}") from None
    where = str(path)
    if not isinstance(data, dict):
        raise GoldenFormatError(f"{where}: expected an object")
    header = _field(data, "header", dict, where)
    for key in _HEADER_KEYS:
        _field(header, key, (str, int), f"{where}: header")
    if header["format"] != FORMAT:
        raise GoldenFormatError(f"{where}: header.format: expected {FORMAT}, got {header['format']!r}")
    recorded = []
    for index, item in enumerate(_field(data, "exchanges", list, where)):
        at = f"{where}: exchanges[{index}]"
        if not isinstance(item, dict):
            raise GoldenFormatError(f"{at}: expected an object")
        frames = item.get("frames")
        if frames is not None and not (isinstance(frames, list) and all(isinstance(f, str) for f in frames)):
            raise GoldenFormatError(f"{at}.frames: expected a list of strings")
        if frames is None and "body" not in item:
            raise GoldenFormatError(f"{at}: needs 'body' or 'frames'")
        recorded.append(
            GoldenExchange(
                id=_field(item, "id", str, at),
                endpoint=_field(item, "endpoint", str, at),
                stream=_field(item, "stream", bool, at),
                request=_field(item, "request", dict, at),
                status=_field(item, "status", int, at),
                body=item.get("body"),
                frames=frames,
                note=item.get("note"),
            )
        )
    return GoldenFile(
        header=header,
        case=_field(data, "case", str, where),
        completion=_field(data, "completion", dict, where),
        exchanges=tuple(recorded),
        path=path,
    )


def read_golden_dir(directory: str | Path) -> list[GoldenFile]:
    """Every ``*.json`` golden file of one directory, in file name order."""
    return [read_golden(path) for path in sorted(Path(directory).glob("*.json"))]


def golden_dirs(root: str | Path, server: str = "vllm") -> Iterator[Path]:
    """The ``<server>-<version>`` directories under ``root`` holding at least one golden, sorted."""
    for path in sorted(Path(root).glob(f"{server}-*")):
        if path.is_dir() and any(path.glob("*.json")):
            yield path
