"""Test-wide settings.

Under ``CI`` (set by the continuous-integration run) Hypothesis draws the same examples on
every run (``derandomize=True``), so a submission is judged on the examples it was checked
with; locally it keeps drawing new ones, which is how edge cases are found.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
