"""The per-render wall-clock budget: a deadline checked together with the fuel.

``with time_budget(0.5): render(context)`` (or ``render(context, budget=0.5)``) raises
:class:`RenderBudgetExceeded` once half a second has passed. No thread, no asynchronous
exception: the render's limits (``runtime/limits.py``) carry a ``time.monotonic()``
deadline, read each time a loop or macro counter runs out of its chunk of fuel (every
1,024 iterations), so a budget costs nothing until then. It is the second line behind the
fuel, output and value limits, which bound what a single operation can do; an operation
that is not a loop iteration or a macro call (one ``sort`` of a huge list passed in) runs
to its end before the deadline is looked at.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

from .limits import RenderBudgetExceeded, current, using

__all__ = ["RenderBudgetExceeded", "time_budget"]


@contextmanager
def time_budget(seconds: Optional[float]) -> Iterator[None]:
    """Renders in this block raise RenderBudgetExceeded past ``seconds`` from now."""
    if seconds is None:
        yield
        return
    with using(current().replace(budget=seconds).started()):
        yield
