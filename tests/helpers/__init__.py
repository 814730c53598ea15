"""Helpers shared by the tests, imported as `tests.helpers.<module>`; pytest fixtures live in `tests/conftest.py`."""
