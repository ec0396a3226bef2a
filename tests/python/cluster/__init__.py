"""Cluster tests (a package, so that conftest.py here does not shadow tests/python/conftest.py,
which the single-member test modules import as `conftest`)."""
