"""Default limits of a served mockoss (no imports: the CLI reads them without loading the server)."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_SCENARIO_BYTES", "DEFAULT_REQUEST_TIMEOUT_S"]

#: Largest request body accepted (bytes); larger ones get 413. A long coding-agent conversation
#: (200k tokens of history, tool results and tool schemas) is a few MiB; 32 MiB leaves room.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
#: Largest scenario upload (``POST /mockoss/scenario``, bytes); larger ones get 413. A compiled
#: scenario holds ~20x its source (measured: 1.9 MB of YAML, 39 MB); bigger scenarios belong in a
#: file (``--scenario``), which is not copied per session. A ``--scenario-dir`` file a request
#: names is capped the same (a 400), as any client can have it compiled.
DEFAULT_MAX_SCENARIO_BYTES = 4 * 1024 * 1024
#: Seconds a client has to send a request head (after connecting, or after its previous
#: response), and then, separately, its body.
DEFAULT_REQUEST_TIMEOUT_S = 30.0
