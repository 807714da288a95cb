"""Goldens from real servers: the shared case list, normalisation, and the golden file store.

:mod:`mockoss.golden.cases` lists every scripted completion mockoss ships and the requests each
is asked with; :mod:`mockoss.golden.normalise` makes answers comparable (ids become their shape,
timestamps ``<TIME>``); :mod:`mockoss.golden.store` reads and writes
``tests/golden/<server>-<version>/<case-id>.json``. The generators live in ``tools/goldens/``;
``tests/golden/test_vllm_goldens.py`` compares the emulated ``vllm`` profile with them.
"""
