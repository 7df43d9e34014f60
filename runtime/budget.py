"""A per-call render time budget that costs nothing when unused.

``with time_budget(0.5): render(context)`` raises :class:`RenderBudgetExceeded` in the
rendering thread once half a second has passed. A watchdog timer delivers the exception
asynchronously (``PyThreadState_SetAsyncExc``), so generated code needs no checks in its
loops and renders at full speed when no budget is set. Pure-Python work (every loop,
macro call and helper of a compiled template) is interrupted at the next bytecode
boundary; a single C-level operation (``'x' * 10**9``) finishes first.
"""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager
from typing import Iterator, Optional


class RenderBudgetExceeded(Exception):
    """The render took longer than the budget the caller set."""


def _raise_in(thread_id: int, exc_type: type) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc_type)
    )


def _cancel(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)


@contextmanager
def time_budget(seconds: Optional[float]) -> Iterator[None]:
    """Raise RenderBudgetExceeded in this thread if the block runs longer than ``seconds``."""
    if seconds is None:
        yield
        return
    if seconds <= 0:
        raise RenderBudgetExceeded(
            f"render budget of {seconds} s exhausted before the render started"
        )
    target = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                _raise_in(target, RenderBudgetExceeded)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except RenderBudgetExceeded:
        raise RenderBudgetExceeded(f"render exceeded its budget of {seconds} s") from None
    finally:
        with lock:
            state["done"] = True
            timer.cancel()
            if state["fired"]:
                _cancel(target)  # an exception not yet delivered must not leak out later
