"""What :class:`~mockoss.server.core.MockServer` answers besides a scripted generation: the
identity, health and side routes of the active profile (:meth:`SideRoutes.probe`,
:attr:`SideRoutes.info`), and an upstream pass-through's error replies and log records
(:meth:`SideRoutes.error_reply`, :meth:`SideRoutes.record_request`).

Split out of :mod:`mockoss.server.core` (a pure move): :class:`SideRoutes` is a base class of
``MockServer``; its methods read the attributes ``MockServer.__post_init__`` sets
(``_base_profile``, ``_lock``, ``_handled``, ``requests``, ``served_model_names``).
"""

from __future__ import annotations

from collections.abc import Mapping

from mockoss.endpoints import endpoint_for_path
from mockoss.profiles.base import Reply, ServerInfo
from mockoss.server.logentry import _share
from mockoss.server.records import Endpoint, RecordedRequest, header_items
from mockoss.server.replies import _for_endpoint, failure_reply


class SideRoutes:
    """The routes of :class:`~mockoss.server.core.MockServer` outside the scenario (its base class)."""

    def error_reply(self, endpoint: Endpoint, status: int, message: str) -> Reply:
        """An error reply in the active profile's shape for ``endpoint`` (e.g. 502, upstream down)."""
        return _for_endpoint(self._base_profile, endpoint).error(status, message)

    def record_request(
        self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str], status: int
    ) -> RecordedRequest:
        """Log a request answered outside :meth:`respond` (passed through to an upstream)."""
        with self._lock:
            record = RecordedRequest(self._handled, endpoint, raw, header_items(headers), None, None, status, None)
            self._handled += 1
            self.requests.append(record)
        _share(record)
        return record


    @property
    def info(self) -> ServerInfo:
        """What identity endpoints report."""
        return ServerInfo(served_model_names=tuple(self.served_model_names), created=self.created)

    def probe(self, method: str, path: str, body: bytes = b"", query: str = "") -> Reply:
        """Answer a request that is not a generation endpoint: the active profile's identity and
        health routes, then its routes on stored responses (``stored_route(method, path, query,
        kept)``: vLLM's ``GET /v1/responses/{id}``, reading this server's kept responses), then its
        side routes that read a body (``side_route``: vLLM's ``/tokenize``, llama-server's
        ``/apply-template``, …), else that server's 404 (or 405 for a generation path with the
        wrong method). ``query``: the URL's query string, undecoded."""
        profile = self._base_profile
        reply = profile.probe(method, path, self.info)
        if reply is not None:
            return reply
        stored_route = getattr(profile, "stored_route", None)
        if stored_route is not None and (reply := stored_route(method, path, query, self.kept)) is not None:
            return reply  # type: ignore[no-any-return]
        side_route = getattr(profile, "side_route", None)
        if side_route is not None:
            try:
                reply = side_route(method, path, body, self.info)
            except BaseException as exc:  # a tokenizer panic (vLLM's /tokenize of a 1,000,000-character word): never a bare 500
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                    raise
                return failure_reply(exc, profile, None, -1)
            if reply is not None:
                return reply  # type: ignore[no-any-return]
        endpoint = endpoint_for_path(path)
        if endpoint is not None and endpoint.name in profile.endpoints and method != "POST":
            return profile.route_error(405, method, path)
        return profile.route_error(404, method, path)
