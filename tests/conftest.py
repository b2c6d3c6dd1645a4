"""Suite-wide settings.

In CI (CI=true) Hypothesis runs derandomized: each property test draws the same examples on every run, so a green
CI stays green on unchanged code. Locally it keeps drawing new examples (and its database replays failures).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")
