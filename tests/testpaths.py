"""The tests/ folder, for test files in its subfolders that name files beside it."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
