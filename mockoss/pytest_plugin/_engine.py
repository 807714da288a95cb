"""``--mockoss-engine vllm``: the mockoss fixtures answer through real vLLM running a scripted model.

One vLLM server per test session (and pytest-xdist worker: each starts its own, ~2.5-3 GB and
about a minute each) is started on first use by the session fixture ``mockoss_engine``; every
fake server the fixtures create then sends its scripted completions through it
(:class:`mockoss.upstream.Upstream` in ``scripted`` mode, see :mod:`mockoss.engines.vllm`).
The answers are vLLM's own, so only the ``vllm`` profile applies: a test that asks for another
profile or for profile switches is skipped, with the reason. Transport timing is not applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mockoss.engines.vllm.launcher import VllmEngine
    from mockoss.pytest_plugin._options import MockossOptions
    from mockoss.upstream import Upstream

__all__ = ["add_options", "skip_unless_engine_applies", "start_engine", "upstream_for"]


def add_options(group: pytest.OptionGroup) -> None:
    """``--mockoss-engine``, ``--mockoss-vllm-python``, ``--mockoss-vllm-arg``."""
    group.addoption(
        "--mockoss-engine",
        choices=("vllm",),
        help="answer the mockoss fixtures with real vLLM running a scripted gpt-oss (README: Real vLLM behind mockoss).",
    )
    group.addoption(
        "--mockoss-vllm-python",
        metavar="PATH",
        help="Python that runs vLLM for --mockoss-engine vllm (default: $MOCKOSS_VLLM_PYTHON, else this one).",
    )
    group.addoption(
        "--mockoss-vllm-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass a flag to vLLM, e.g. --mockoss-vllm-arg=--reasoning-parser=openai_gptoss (repeatable).",
    )


def start_engine(config: pytest.Config) -> VllmEngine | None:
    """The started engine ``--mockoss-engine`` asks for, else ``None``.

    Raises:
        mockoss.engines.EngineError: vLLM is not installed or did not start.
    """
    if config.getoption("mockoss_engine", None) is None:
        return None
    from mockoss.engines.vllm.launcher import VllmEngine

    engine = VllmEngine(python=config.getoption("mockoss_vllm_python"), extra_args=config.getoption("mockoss_vllm_arg"))
    return engine.start()


def upstream_for(engine: VllmEngine | None) -> Upstream | None:
    """The :class:`~mockoss.upstream.Upstream` a fake server needs to answer through ``engine``."""
    if engine is None:
        return None
    from mockoss.upstream import Upstream

    return Upstream(engine.url, mode="scripted")


def skip_unless_engine_applies(engine: VllmEngine | None, options: MockossOptions) -> None:
    """Skip the test when it needs the emulation: a profile other than ``vllm``, or switches."""
    if engine is None:
        return
    if options.profile not in (None, "vllm"):
        pytest.skip(f"--mockoss-engine vllm answers as vLLM itself; this test asks for profile {options.profile!r}")
    if options.switches:
        pytest.skip("--mockoss-engine vllm answers as vLLM itself; profile switches do not apply")
