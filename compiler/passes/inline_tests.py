"""Type tests inlined as the Python expression their runtime function evaluates.

the type tests (``is string``, ``is defined``, ``is none``, ...) as the Python expressions
their runtime functions evaluate (``isinstance(x, str)``), without the call; ``x is mapping``
of a variable as ``type(x) is dict or test_mapping(x)`` (a ``dict`` is a ``Mapping``: the
ABC's ``isinstance`` only for other values).

Keeps output byte-identical (pure IR -> IR).
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .util import has_node, map_nodes, type_is, unary_helper


def _isinstance(value: Any, cls: str) -> ir.Expr:
    return ir.Helper("builtins.isinstance", (value, ir.Ref(cls)))


#: test helper -> the expression its body is, for its one argument
def _is_bool(expr: Any) -> bool:
    return (isinstance(expr, ir.Helper) and expr.name == "builtins.isinstance") or (
        isinstance(expr, ir.Compare) and all(op in ("is", "is not") for op, _ in expr.ops)
    )


def _mapping(x: Any) -> ir.Expr:
    """``x is mapping``: a ``dict`` is one (``isinstance`` of the ``Mapping`` ABC costs
    ~0.25 us a call; ``type(x) is dict`` ~30 ns), any other value takes the ABC's test. ``x``
    is read twice: only for a variable (:data:`TWICE`)."""
    return ir.BoolOp("or", (type_is(x, "builtins.dict"), ir.Helper("jinja_filters.test_mapping", (x,))))


#: tests inlined only on a variable (their expression reads the value twice)
TWICE = {"jinja_filters.test_mapping": _mapping}

INLINE_TESTS = {
    "jinja_filters.test_string": lambda x: _isinstance(x, "builtins.str"),
    # ``Undefined`` is final (runtime/jinja/core.py): ``isinstance`` is an exact type test
    "jinja_filters.test_defined": lambda x: type_is(x, "jinja.Undefined", "is not"),
    "jinja_filters.test_undefined": lambda x: type_is(x, "jinja.Undefined"),
    "jinja_filters.test_none": lambda x: ir.Compare(x, (("is", ir.Const(None)),)),
    "jinja_filters.test_true": lambda x: ir.Compare(x, (("is", ir.Const(True)),)),
    "jinja_filters.test_false": lambda x: ir.Compare(x, (("is", ir.Const(False)),)),
}


_NEGATED = {"is": "is not", "is not": "is"}


def _literal_like(expr: Any) -> bool:
    """A literal, or operators on literals (which Python's compiler folds into one)."""
    if isinstance(expr, (ir.Const, ir.ListLit, ir.TupleLit, ir.DictLit)):
        return True
    if isinstance(expr, ir.BinOp):
        return _literal_like(expr.left) and _literal_like(expr.right)
    if isinstance(expr, ir.UnaryOp):
        return _literal_like(expr.operand)
    return False


def run(module: ir.Module) -> ir.Module:
    """Invariant: no call of a test helper whose body is one Python expression."""

    def fold(node: Any) -> Any:
        cls = node.__class__  # (most nodes are neither a helper nor a ``not``)
        if cls is ir.Helper:
            # ``1 is None`` (or ``(1 + 2) is None``, which Python folds to it) would make
            # Python warn about ``is`` with a literal
            if unary_helper(node, INLINE_TESTS) and not _literal_like(node.args[0]):
                return ir.replace(INLINE_TESTS[node.name](node.args[0]), span=node.span)
            if unary_helper(node, TWICE) and isinstance(node.args[0], (ir.Name, ir.Local)):
                return ir.replace(TWICE[node.name](node.args[0]), span=node.span)
            return node
        if cls is not ir.Not:
            return node
        if (
            isinstance(node, ir.Not)
            and isinstance(node.operand, ir.Not)
            and _is_bool(node.operand.operand)
        ):
            return node.operand.operand  # ``not not b`` is ``b`` for a bool
        if (
            isinstance(node, ir.Not)
            and isinstance(node.operand, ir.Compare)
            and len(node.operand.ops) == 1
            and node.operand.ops[0][0] in _NEGATED
        ):
            (op, right), = node.operand.ops  # ``not a is not b`` is ``a is b``: identity
            return ir.replace(node.operand, ops=((_NEGATED[op], right),), span=node.span)
        return node

    if not has_node(module.body, _foldable, _WANTED):
        return module
    return ir.replace(module, body=map_nodes(module.body, fold, classes=_WANTED))


def _foldable(node: Any) -> bool:
    """What ``fold`` may change, before any change: a test helper, or a ``not`` of a ``not``
    or of a comparison (a comparison made of a test is under a test helper)."""
    return (isinstance(node, ir.Helper) and (node.name in INLINE_TESTS or node.name in TWICE)) or (
        isinstance(node, ir.Not) and isinstance(node.operand, (ir.Not, ir.Compare))
    )


#: the classes of the nodes ``_foldable`` can hold of (``has_node``'s filter)
_WANTED = frozenset({ir.Helper, ir.Not})
