"""Fast drawing for the Hypothesis strategies of the property tests (Jinja and Go).

A Hypothesis draw costs tens of microseconds, and the engine's bookkeeping (choice tree,
sizes, spans) grows with the number of draws, while every example of a differential property
draws a whole template and a whole data context. Drawn one small choice at a time, generation
took most of the time of a property (hundreds of draws per example). The generators therefore:

* take their many small uniform choices (which branch, which item of a list, how many items,
  one time in n) from a :class:`Dice`, which draws a block of random bytes at a time and spends
  one byte per choice: one draw for dozens of choices. Hypothesis still shrinks the bytes
  towards zero, that is towards the first option of every choice;
* draw values that want Hypothesis' own distributions (text of an alphabet, floats, integers
  over a wide range) from strategies built once, at import, and unwrapped (:func:`unwrapped`);
* use no ``st.one_of`` (its branch is a filtered ``sampled_from`` of its own), ``st.lists`` /
  ``st.dictionaries`` / ``fixed_dictionaries`` with optional keys (a draw per item, redraws of
  duplicate keys), nor ``st.recursive`` (which throws away and redraws any value that exceeds
  ``max_leaves``: half of the draws of a Jinja context were such retries).

Generators are plain functions of a Dice ``g`` that call each other; :func:`generator` makes a
strategy of one. A uniquely named module (pytest puts several test folders on ``sys.path``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from hypothesis import strategies as st


def unwrapped(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """The strategy a lazily built one stands for (``st.integers(...)``, ``st.text(...)`` and
    most others are built on first use): drawing it directly skips the unwrapping Hypothesis
    otherwise redoes on every draw. Falls back to the strategy itself."""
    for _ in range(8):
        inner = getattr(strategy, "wrapped_strategy", None)
        if not isinstance(inner, st.SearchStrategy) or inner is strategy:
            break
        strategy = inner
    return strategy


#: A block of random bytes for the Dice: one draw, BLOCK_SIZE choices.
BLOCK_SIZE = 16
_BLOCK = unwrapped(st.binary(min_size=BLOCK_SIZE, max_size=BLOCK_SIZE))


class Dice:
    """Small uniform choices for one run of a generator, many per Hypothesis draw.

    ``roll(n)`` spends one byte of the current block (more when ``n`` > 256): byte ``b`` gives
    ``b * n >> 8``, so each face gets ``256 // n`` or one more of the 256 byte values. ``draw``
    is Hypothesis' draw, for everything else.
    """

    __slots__ = ("draw", "_block", "_pos")

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self._block = b""
        self._pos = 0

    def _byte(self) -> int:
        if self._pos >= len(self._block):
            self._block = self.draw(_BLOCK)
            self._pos = 0
        self._pos += 1
        return self._block[self._pos - 1]

    def new_block(self) -> None:
        """Start a new block at the next choice. Called where a generator starts an
        independent part (a statement, a context name): the shrinker can then zero or
        delete that part's bytes without shifting the choices of the parts after it."""
        self._pos = len(self._block)

    def roll(self, n: int) -> int:
        """0 .. n-1 (``if g.roll(3) == 0``: one time in three)."""
        if n <= 256:
            return self._byte() * n >> 8
        value, bits = 0, 0
        while 1 << bits < n << 8:  # 8 bits to spare: within 1/256 of uniform
            value, bits = value << 8 | self._byte(), bits + 8
        return value * n >> bits

    def int(self, lo: int, hi: int) -> int:
        """lo .. hi, uniformly."""
        return lo + self.roll(hi - lo + 1) if hi > lo else lo

    def pick(self, options: Any) -> Any:
        return options[self.roll(len(options))]

    def chance(self, n: int) -> bool:
        """True with probability about 1/n (the *unlikely* branch is also the one that
        Hypothesis does not shrink towards)."""
        return self.roll(n) == n - 1

    def shuffled(self, items: list) -> list:
        items = list(items)
        for i in range(len(items) - 1, 0, -1):
            j = self.roll(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    def optional(self, fields: dict, required: Optional[dict] = None) -> dict:
        """Like ``st.fixed_dictionaries(required, optional=fields)`` over generators: each
        optional key present one time in two, the optional keys in a random order."""
        out = {k: fn(self) for k, fn in (required or {}).items()}
        for key in self.shuffled([k for k in fields if self.roll(2)]):
            out[key] = fields[key](self)
        return out


def generator(fn: Callable[..., Any], *args: Any) -> st.SearchStrategy:
    """The strategy of ``fn(Dice(draw), *args)``."""
    return st.composite(lambda draw: fn(Dice(draw), *args))()


#: Of 16, how often a JSON value at depth 0, 1, 2, 3 is a list or an object (never deeper):
#: close to the shapes ``st.recursive(scalars, lists | dictionaries, max_leaves)`` drew (a
#: container at the top most of the time, a mean depth about 1, some empty containers).
_CONTAINER_ODDS = (13, 6, 4, 2)


def json_tree(g: Dice, scalar: Callable[[Dice], Any], key: Callable[[Dice], Any], max_leaves: int) -> Any:
    """A JSON value: a scalar, or lists / objects of up to 4 items, nested at most 4 deep, with at
    most ``max_leaves`` scalars. Spending the budget never retries anything (a key drawn
    twice in an object is overwritten)."""
    budget = [max_leaves]

    def value(depth: int) -> Any:
        if budget[0] > 0 and depth < len(_CONTAINER_ODDS) and g.roll(16) < _CONTAINER_ODDS[depth]:
            n = g.int(0, 4)
            if g.roll(2):
                out: list = []
                while len(out) < n and budget[0] > 0:
                    out.append(value(depth + 1))
                return out
            obj: dict = {}
            for _ in range(n):
                if budget[0] <= 0:
                    break
                k = key(g)
                obj[k] = value(depth + 1)
            return obj
        budget[0] -= 1
        return scalar(g)

    return value(0)
