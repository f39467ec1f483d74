"""The test suite; it mirrors the package tree. Hand-made fixtures live in ``tests/fixtures``."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
