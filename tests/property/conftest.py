"""Hypothesis profiles for the property tests.

``TMPL2PY_HYPOTHESIS_PROFILE`` selects one (default ``ci``):

* ``ci``   derandomized and bounded: the whole property suite runs in well under four
  minutes on two cores.
* ``deep`` randomized, 20,000 examples per property (a long run; hours of CPU).

``BUDGETS`` gives each property its number of examples under each profile, registered as
the profiles ``<profile>.<property>`` (``ci.render``, ``deep.corpus``, ...). ``TMPL2PY_HYPOTHESIS_SCALE`` (a float, default 1) multiplies them,
e.g. to make a quick local smoke run; ``TMPL2PY_HYPOTHESIS_EXAMPLES="render=5000,corpus=100"``
sets single budgets.

For long exploratory runs, ``TMPL2PY_FAST_COMPILE=1`` skips black inside the compiler (both
dialects; see differential.py): black is then most of the time of an example.

With ``TMPL2PY_DIVERGENCE_LOG=path`` the differential properties do not stop at the first
divergence: each one is appended to ``path`` as a JSON line and the run goes on (for long
exploratory runs; minimise the logged cases by hand or with ``tests/property/minimize.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import register_budgets  # noqa: E402

PROFILE = os.environ.get("TMPL2PY_HYPOTHESIS_PROFILE", "ci")
SCALE = float(os.environ.get("TMPL2PY_HYPOTHESIS_SCALE", "1"))

_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    print_blob=True,
)
# ci does not shrink: a failure is reported at once with the example found (shrinking a
# template can take minutes); minimise it with the deep profile or by hand.
settings.register_profile(
    "ci", derandomize=True, max_examples=100, database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate], **_COMMON,
)
settings.register_profile("deep", derandomize=False, max_examples=20_000, **_COMMON)

#: Examples per property and profile. ``corpus`` is per corpus template (61 of them).
BUDGETS = {
    "ci": {"render": 300, "crash": 200, "deterministic": 40, "compiles": 40, "corpus": 10},
    "deep": {"render": 20_000, "crash": 20_000, "deterministic": 20_000, "compiles": 20_000,
             "corpus": 400},
}

register_budgets(BUDGETS, SCALE)

settings.load_profile(PROFILE if PROFILE in BUDGETS else "ci")
