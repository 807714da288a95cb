"""The README recipe from a built wheel in a fresh virtual environment, as a new project installs
mockoss. Opt-in (it builds a wheel and installs openai and pytest from the package index, about a
minute): MOCKOSS_WHEEL_TEST=1 python -m pytest tests/test_packaging_recipe.py."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from test_readme_recipe import readme_recipe

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    os.environ.get("MOCKOSS_WHEEL_TEST") != "1", reason="opt-in: set MOCKOSS_WHEEL_TEST=1 (builds a wheel, installs it)"
)


def test_the_recipe_runs_from_a_wheel_in_a_fresh_venv(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)], check=True
    )
    [wheel] = wheels.glob("mockoss-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel), "openai", "pytest"], check=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_tool_loop.py").write_text(readme_recipe())
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tool_loop.py"],
        cwd=project, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""}, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
