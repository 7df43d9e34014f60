"""The IR classes (``compiler/ir.py``'s ``node``): their methods come from ``ir_methods.py``,
which must be current, and behave as ``@dataclass(frozen=True, slots=True)`` would.

``TMPL2PY_UPDATE_TABLES=1`` rewrites ``ir_methods.py`` instead of failing when it is stale.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
from pathlib import Path

import pytest

from tmpl2py.compiler import ir, ir_methods


def test_ir_methods_is_current() -> None:
    path = Path(ir_methods.__file__)
    text = ir.methods_module()
    if os.environ.get("TMPL2PY_UPDATE_TABLES") == "1" and path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, (
        f"{path} is stale: TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_ir_methods.py"
    )


def test_the_classes_use_the_shipped_methods() -> None:
    assert ir.Const.__init__.__code__.co_filename == ir_methods.__file__


def _reference(cls: type) -> type:
    """The same class made by dataclasses, for comparison."""
    fields = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    made = dataclasses.make_dataclass(
        cls.__name__, [(n, t, dataclasses.field(default=f.default, compare=f.compare, repr=f.repr))
                       if f.default is not dataclasses.MISSING else (n, t) for n, t, f in fields],
        frozen=True, slots=True,
    )
    return made


@pytest.mark.parametrize("cls", ir.NODE_CLASSES, ids=lambda c: c.__name__)
def test_every_class_behaves_as_its_dataclass(cls: type) -> None:
    ref = _reference(cls)
    fields = dataclasses.fields(cls)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    values = {name: ir.Const(i) for i, name in enumerate(required)}
    ours, theirs = cls(**values), ref(**values)
    positional = cls(*values.values())
    assert ours == positional and hash(ours) == hash(positional)
    assert repr(ours).replace(cls.__qualname__, "X") == repr(theirs).replace(ref.__qualname__, "X")
    assert cls.__slots__ == ref.__slots__ and cls.__match_args__ == ref.__match_args__
    assert not hasattr(ours, "__dict__")
    for f in fields:
        assert getattr(ours, f.name) == getattr(theirs, f.name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ours, f.name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(ours, f.name)
    if "span" in cls.__dataclass_fields__:  # spans take no part in equality
        moved = dataclasses.replace(ours, span=(7, 9))
        assert moved == ours and hash(moved) == hash(ours) and moved.span == (7, 9)
    if required:
        other = dataclasses.replace(ours, **{required[0]: ir.Const("other")})
        assert other != ours and (other == ref(**values)) is False
    assert ours != theirs  # another class: never equal
    assert copy.deepcopy(ours) == ours and pickle.loads(pickle.dumps(ours)) == ours
    # ir.replace (the class's generated __replace__) is dataclasses.replace, field by field
    for i, f in enumerate(fields):
        new = ir.Const(f"new{i}")
        mine, reference = ir.replace(ours, **{f.name: new}), dataclasses.replace(ours, **{f.name: new})
        assert type(mine) is cls and all(
            getattr(mine, g.name) == getattr(reference, g.name) for g in fields
        )
    assert ir.replace(ours) == ours
    with pytest.raises(TypeError):
        ir.replace(ours, no_such_field=1)
    with pytest.raises(TypeError):
        cls(*values.values(), *range(len(fields) + 1))


def test_a_dataclass_subclass_of_a_node_takes_its_fields_as_a_dataclass_would() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Marked(ir.Output):
        extra: int = 0

    made = Marked(ir.Const("x"), (1, 2), 3)
    assert (made.expr, made.span, made.extra) == (ir.Const("x"), (1, 2), 3)
    assert [f.name for f in dataclasses.fields(Marked)] == ["expr", "span", "extra"]
    assert all(f.kw_only is False for f in dataclasses.fields(ir.Output))


def test_map_children_rebuilds_only_what_changed() -> None:
    node = ir.BinOp("+", ir.Const(1), ir.Name("x"), span=(2, 3))
    assert ir.map_children(node, lambda n: n) is node
    swapped = ir.map_children(node, lambda n: ir.Const(2) if n == ir.Const(1) else n)
    assert swapped == ir.BinOp("+", ir.Const(2), ir.Name("x")) and swapped.span == (2, 3)
