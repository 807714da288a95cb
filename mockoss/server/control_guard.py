"""The guard of the control routes ``/mockoss/*`` (:mod:`mockoss.server.control`).

Every control route but ``/mockoss/ready`` refuses, whatever the token:

* a ``Host`` that is not a loopback name (``127.0.0.1``, ``localhost``, ``::1``) or an allowed host
  (``--allowed-host``): 403. A web page that rebinds its own DNS name to 127.0.0.1 sends its own
  name as ``Host`` (DNS rebinding).
* an ``Origin`` whose host is not one of those, or ``Sec-Fetch-Site`` other than ``same-origin``
  / ``none``: 403. Browsers send them on cross-origin requests, including no-cors ones.
* a body of a type an HTML form or a CORS-simple ``fetch`` can send without a preflight
  (``text/plain``, ``application/x-www-form-urlencoded``, ``multipart/form-data``) or any type but
  JSON or YAML: 415.

With an admin token (``--admin-token`` / ``MOCKOSS_ADMIN_TOKEN``) every route but ``ready``,
``docs`` and ``openapi.json`` also needs ``Authorization: Bearer TOKEN`` or
``X-Mockoss-Admin-Token: TOKEN`` (401; compared in constant time). The emulated API is not guarded.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from mockoss.server.settings import DEFAULT_MAX_SCENARIO_BYTES

__all__ = ["ADMIN_HEADER", "ControlOptions", "accepted_hosts", "error", "refusal"]

ADMIN_HEADER = "x-mockoss-admin-token"
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_FORM_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data")
_OPEN_PATHS = ("/mockoss/ready",)
_NO_TOKEN_PATHS = ("/mockoss/ready", "/mockoss/docs", "/mockoss/openapi.json")
_BODY_TYPES = ("application/json", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


@dataclass(frozen=True)
class ControlOptions:
    """How the control plane guards itself and what it prints.

    Attributes:
        admin_token: required on control routes when set (``--admin-token``, ``MOCKOSS_ADMIN_TOKEN``).
        allowed_hosts: ``Host`` names (without port) accepted besides loopback ones, e.g. a
            docker-compose service name (``--allowed-host``).
        access_log: print one line per request to stderr (``--access-log``).
        max_scenario_bytes: largest ``POST /mockoss/scenario`` body, bytes; a larger one gets 413
            (``--max-scenario-bytes``). The sessions together keep at most
            :data:`mockoss.server.control_routes.UPLOADS_KEPT` times this of uploaded scenarios.
    """

    admin_token: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    access_log: bool = False
    max_scenario_bytes: int = DEFAULT_MAX_SCENARIO_BYTES


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_host(origin: str) -> str | None:
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme not in ("http", "https"):
        return None
    return _host_name(rest.split("/", 1)[0])


def accepted_hosts(options: ControlOptions) -> frozenset[str]:
    """Loopback names and ``options.allowed_hosts``, lower-case."""
    return frozenset({*_LOOPBACK, *(h.lower() for h in options.allowed_hosts)})


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "status": status}}, status_code=status)


def refusal(scope: Scope, headers: dict[str, str], options: ControlOptions, hosts: frozenset[str]) -> Response | None:
    """The answer refusing a request to a control route, else ``None`` (see the module docstring).

    Args:
        headers: the request headers, lower-case names.
        hosts: accepted ``Host`` names (:func:`accepted_hosts`).
    """
    path = scope["path"]
    if path in _OPEN_PATHS:
        return None
    host = _host_name(headers.get("host", ""))
    if host not in hosts:
        return error(403, f"mockoss: control routes refuse Host {host!r} (DNS rebinding guard); allow it with --allowed-host")
    origin = headers.get("origin")
    if origin is not None and _origin_host(origin) not in hosts:
        return error(403, f"mockoss: control routes refuse cross-origin requests (Origin {origin!r})")
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return error(403, "mockoss: control routes refuse cross-site requests (Sec-Fetch-Site)")
    content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if (
        scope["method"] not in ("GET", "HEAD", "OPTIONS")
        and content_type
        and (content_type in _FORM_TYPES or content_type not in _BODY_TYPES)
    ):
        return error(415, f"mockoss: control routes take application/json or application/yaml bodies, not {content_type!r}")
    token = options.admin_token
    if token and path not in _NO_TOKEN_PATHS:
        given = headers.get(ADMIN_HEADER) or ""
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            given = given or authorization[7:].strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return error(401, "mockoss: control routes need the admin token (Authorization: Bearer TOKEN or X-Mockoss-Admin-Token)")
    return None


