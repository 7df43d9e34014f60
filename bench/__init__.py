"""The benchmark harness behind ``tmpl2py bench``: ``seeds`` times the seed templates against
hand-written renderers, transformers, minijinja and the Go reference."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    """``tmpl2py bench ARGS``: the corpus benchmark (``corpus``) when ``--corpus`` is given,
    else the seed benchmark (``seeds``). Each is imported only when run."""
    if any(a == "--corpus" or a.startswith("--corpus=") for a in argv):
        from . import corpus

        return int(corpus.main(list(argv)))
    from . import seeds

    return int(seeds.main(list(argv)))
