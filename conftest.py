"""Repository-level pytest configuration.

The ``mockoss`` plugin is loaded through its ``pytest11`` entry point once the package is
installed (``pip install -e '.[test]'``); nothing else is needed here.
"""
