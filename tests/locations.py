"""Where the tests find the repository, the test data and the shared data, wherever the test file lives."""

from pathlib import Path

#: the tests folder
TESTS = Path(__file__).resolve().parent
#: the repository
REPO = TESTS.parent
