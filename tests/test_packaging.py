"""What a plain `pip install .` ships: every package, and the scenario library."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_directory_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "mockoss").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    found.add("mockoss.scenarios")  # mapped from the top-level scenarios/ folder
    assert found == listed
    assert config["package-dir"] == {"mockoss.scenarios": "scenarios"}


def test_scenario_files_are_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-data"]["mockoss.scenarios"] == ["*.yaml"]
    assert list((ROOT / "scenarios").glob("*.yaml"))
