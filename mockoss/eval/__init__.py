"""``mockoss eval``: send one request N times to a server and count the outcomes.

Against a real gpt-oss server sampling at temperature 1.0, the same request gives a distribution
of outcomes (a tool-call item, an assistant message, an HTTP 500 from a HarmonyError, …); against
mockoss, the scenario decides them. Example::

    $ mockoss eval --url http://127.0.0.1:8000/v1 --request leak.json -n 40
    outcome                              count  share
    200 — reasoning, mcp_call(tool/mcp)     31  77.5%
    …

Modules: :mod:`~mockoss.eval.classify` (exchange → outcome key, pure),
:mod:`~mockoss.eval.run` (request file, concurrent sending), :mod:`~mockoss.eval.report`
(counting, tables, JSON), :mod:`~mockoss.eval.command` (the CLI subcommand).
"""

from typing import TYPE_CHECKING

# classify stays eager: its function shares the submodule's name, and a lazy one would be shadowed
# by the submodule once anything imports it (the import system sets the package attribute).
from mockoss.eval.classify import Exchange, classify
from mockoss.lazynames import module_getattr

if TYPE_CHECKING:
    from mockoss.eval.report import EvalResult, format_compare, format_table
    from mockoss.eval.run import EvalRequest, load_request, run_requests

__all__ = [
    "EvalRequest",
    "EvalResult",
    "Exchange",
    "classify",
    "format_compare",
    "format_table",
    "load_request",
    "run_requests",
]

#: Where the other names live: imported on first use (PEP 562 module ``__getattr__``,
#: :func:`mockoss.lazynames.module_getattr`), so that building the ``mockoss`` command line (which
#: adds ``eval``'s arguments from :mod:`~mockoss.eval.command`) does not import the sender and the
#: report (issue 9: ``mockoss serve``'s cold start).
_HOME = {
    "EvalResult": "mockoss.eval.report", "format_compare": "mockoss.eval.report", "format_table": "mockoss.eval.report",
    "EvalRequest": "mockoss.eval.run", "load_request": "mockoss.eval.run", "run_requests": "mockoss.eval.run",
}
__getattr__ = module_getattr(globals(), _HOME)
