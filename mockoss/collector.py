"""Python's cyclic garbage collector paused while a stretch of work runs, on any thread.

A collection runs in whichever thread allocates when a threshold is crossed, holding the
interpreter for as long as it takes: a full pass over a big heap is ~40 ms for ~2 million objects,
and ~0.3 s while a 14 MB request body's 1.5 million parsed objects are alive. Used by the tool
checks (:mod:`mockoss.scenario.tool_check`, where it was written) and by the heavy requests
answered off the event loop (:func:`mockoss.server.offload._respond_counting`).

Not done, measured (issue 9, task L): pausing the collector while a long answer's plans are
warmed (:mod:`mockoss.server.warmup`) and ``gc.freeze()`` after, so that the plans the memos keep
leave the collector's sight. In process, with ``mockoss serve``'s settings and 300,000 other live
objects, that removed the full collections (96-135 ms each) from the first requests on a
40,000-word answer; paused without the freeze, one young collection over the new plan took
22-49 ms instead. But ``mockoss serve`` ran no full collection at all over the whole of
``bench_isolation.py`` (its start-up freeze and third threshold of 100,
:func:`mockoss.server.run.serve_forever`), so there was nothing to remove there; and a freeze
outlives what it froze: the plans are acyclic (emptying the memos freed all but 12 of 197,058
frozen objects by reference counting), but they hang off a server's and a scenario's cycles, so a
dropped server (one per test with the pytest fixture) kept its 196,910 frozen objects until
``gc.unfreeze()``.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["COLLECTOR", "CollectorPause"]


class CollectorPause:
    """Python's cyclic garbage collector paused while a stretch of work runs: a request's schema
    checks (at most :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S` of CPU, plus one keyword's
    work), a heavy request answered on a worker thread.

    A collection runs in whichever thread allocates when a threshold is crossed, and its time is
    that thread's CPU time: a full pass over a big heap (a test process holding ~2 million objects:
    ~40 ms) falling inside a check was charged to the schema and cut a legitimate check short,
    a false "not fully checked" warning that fails a test under
    ``assert_tool_calls_match_declared_tools=True`` (found by a review). Pausing the collector for
    a few ms is what the ``gc`` module's documentation suggests for such stretches; reference
    counting still frees everything that is not in a cycle, and the next collection after
    :meth:`resume` finds the rest. Counted, so that checks in several threads (one
    server per pytest test id) turn it back on only when the last one ends.

    Paused by generation 0's threshold (0: no automatic collection, ``gc.set_threshold``'s
    documented meaning, which CPython's own test suite checks on the incremental collector too:
    python/cpython PR #140304, gh-139951, backported to 3.13 and 3.14), not ``gc.disable()``:
    the enabled flag stays the user's, so a ``gc.disable()`` on another thread while a check runs
    (``timeit`` does, around what it times) is not undone when the check ends, and a check started while the user had the collector off is
    still paused when the user turns it on (a review's findings). The thresholds are put back
    only if nobody changed them meanwhile. Left: code on another thread that saves the thresholds
    while a check runs and sets them back after it ends restores generation 0's 0 (no automatic
    collection until thresholds are set again); saving and restoring ``gc.isenabled()`` is the
    common idiom, and is safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0  # checks paused now, on any thread
        self._saved: tuple[int, ...] = ()  # the thresholds before the first of them paused

    def pause(self) -> None:
        """Pause for one request's checks; the caller's ``finally`` calls :meth:`resume` once."""
        with self._lock:
            if self._depth == 0:
                self._saved = gc.get_threshold()
                gc.set_threshold(0, *self._saved[1:])
            self._depth += 1

    def resume(self) -> None:
        """End one :meth:`pause`; the last one puts the thresholds back unless changed meanwhile."""
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and gc.get_threshold() == (0, *self._saved[1:]):  # else changed meanwhile: theirs
                gc.set_threshold(*self._saved)


#: The process's one pause counter (every user of the pause shares it: the thresholds are saved by
#: the first pause and put back by the last resume).
COLLECTOR = CollectorPause()
