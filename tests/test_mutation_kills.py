"""Tests written to kill the mutants scripts/mutation.py found surviving (see tests/MUTATION.md)."""
