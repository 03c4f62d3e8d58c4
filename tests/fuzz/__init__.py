"""The fuzzing harness (see conftest.py): a package, so that its conftest and helpers never
shadow the test suite's own `conftest` module."""
