"""Go's prefix for an execution error that escapes a render (error path only).

Go's text/template reports an execution error as
``template: PARSENAME:LINE:COL: executing "NAME" at <NODE>: MESSAGE`` (exec.go
``state.errorf``; parse.go ``Tree.ErrorContext``: LINE is 1-based, COL the 0-based byte
offset of the node in its line, NODE the node's ``String()``). The runtime raises
``ExecError`` with MESSAGE only; nothing on the fast path knows where it is.

When an ExecError escapes, :func:`locate` finds where: the innermost frame of the
generated module says which call raised (``co_positions`` of the instruction: the exact
call expression), the calls of the module text taken in tree order are paired with the
IR's Helper / CallValue nodes in tree order (the emitter keeps the IR's shape), and the
node's span column names its site in ``GO_ERROR_SITES`` (see ``lower._Lowerer._at``).
A message Go gives at the calling command (``error calling NAME: ...``) takes the site's
command; any other the site's node. Where no site is known the error keeps the bare
message.
"""

from __future__ import annotations

import ast
from types import TracebackType
from typing import Any, Optional

from tmpl2py.runtime.go.execute import ExecError
from tmpl2py.runtime.limits import RenderLimitExceeded

from .. import ir
from .literals import go_quote

_CALL_MESSAGE = "error calling "


def locate(error: Any, template: Any) -> Any:
    """``error`` with Go's prefix (a new ExecError), or ``error`` itself when its site is
    unknown or it has a prefix already. A limit error (``RenderLimitExceeded``: Go's depth
    error is one) keeps its own text and gains its position (:func:`locate_limit`)."""
    if isinstance(error, RenderLimitExceeded):
        return locate_limit(error, template)
    if error.prefix:
        return error
    sites = template.namespace.get("GO_ERROR_SITES")
    if not sites:
        return error
    site_no = _site_number(error.__traceback__, template)
    if not site_no:
        return error
    tmpl_name, pos, text, call_pos, call_text = sites[site_no - 1]
    if error.message.startswith(_CALL_MESSAGE) and call_pos >= 0:
        pos, text = call_pos, call_text
    if pos < 0:
        return error
    line, col = _line_col(template.source, pos)
    # PARSENAME is "": Ollama parses with template.New(""), as tests/goref does
    prefix = f"template: :{line}:{col}: executing {go_quote(tmpl_name)} at <{text}>: "
    located = ExecError(error.message, prefix)
    located.__traceback__ = error.__traceback__
    return located


def locate_limit(error: RenderLimitExceeded, template: Any) -> RenderLimitExceeded:
    """``error`` itself, its ``where`` set to ``LINE:COL`` as Go counts them (the line
    1-based, the column the 0-based byte offset, as in Go's own error texts): the site of
    the call that raised, or, for a limit the loop counter hit (fuel, output: raised by
    the refuel of a loop's charge), the site of the loop's ``range``."""
    sites = template.namespace.get("GO_ERROR_SITES")
    raised: Optional[BaseException] = error  # or the error it replaced (a RecursionError)
    while raised is not None and _generated_frame(raised.__traceback__, template) is None:
        raised = raised.__cause__ or raised.__context__
    if error.where or not sites or raised is None:
        return error
    tb = raised.__traceback__
    site_no = _site_number(tb, template) or _loop_site(_generated_frame(tb, template), template)
    if site_no:
        pos, call_pos = sites[site_no - 1][1], sites[site_no - 1][3]
        pos = pos if pos >= 0 else call_pos
        if pos >= 0:
            line, col = _line_col(template.source, pos)
            error.locate(f"{line}:{col}", line, col)
    return error


def _loop_site(frame_tb: Any, template: Any) -> int:
    """The site of the generated ``for`` whose fuel charge raised (the charge stands just
    before it, its items just before that: ``compiler/fuel.py``), else of the innermost
    ``for`` around the line that raised: the first call of its items that has one (the
    range's pipeline)."""
    line = frame_tb.tb_lineno
    tree = ast.parse(template._emitted)
    iterables = [loop.iter for loop in _charged_loops(tree, line)]
    # a loop's items are a name the charge's prologue assigned (``_items3 = range_values(...)``)
    assigned = {
        n.targets[0].id: n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    }
    iterables += [
        assigned.get(n.iter.id, n.iter) if isinstance(n.iter, ast.Name) else n.iter
        for n in sorted(ast.walk(tree), key=lambda n: -getattr(n, "lineno", 0))
        if isinstance(n, ast.For) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    by_position = _sites_by_position(template)
    for iterable in iterables:
        for call in _preorder(iterable):
            if isinstance(call, ast.Call):
                where = (call.lineno, call.end_lineno, call.col_offset, call.end_col_offset)
                if where in by_position:
                    return by_position[where]
    return 0


def _charged_loops(tree: ast.AST, line: int) -> list:
    """The loop whose charge (``if _fuel < 0: refuel``) holds ``line``, as a ``For`` whose
    items are the value its ``_items`` name was assigned (an empty list: none)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body[:-1]):
            nxt = body[i + 1]
            if isinstance(stmt, ast.If) and isinstance(nxt, ast.For):
                if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                    items = nxt.iter
                    if isinstance(items, ast.Name) and i >= 2:
                        made = body[i - 2]
                        if isinstance(made, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == items.id for t in made.targets
                        ):
                            items = made.value
                    return [ast.For(target=nxt.target, iter=items, body=[], orelse=[])]
    return []


def _generated_frame(tb: Optional[TracebackType], template: Any) -> Optional[TracebackType]:
    """The innermost traceback entry in the generated module."""
    filename = template.namespace["render"].__code__.co_filename
    frame_tb = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            frame_tb = tb
        tb = tb.tb_next
    return frame_tb


def _line_col(source: str, pos: int) -> tuple[int, int]:
    """ErrorContext's line (1-based) and column (byte offset in the line, 0-based); ``pos``
    counts characters (Lark's), Go counts bytes: measured on the encoded text before it."""
    from tmpl2py.runtime.go.fmt import to_bytes

    before = to_bytes(source[:pos])  # (a lone surrogate: its three bytes)
    start = before.rfind(b"\n") + 1
    return before.count(b"\n") + 1, len(before) - start


def _site_number(tb: Optional[TracebackType], template: Any) -> int:
    """The GO_ERROR_SITES number (1-based; 0: none) of the generated call that raised."""
    frame_tb = _generated_frame(tb, template)
    if frame_tb is None:
        return 0
    code = frame_tb.tb_frame.f_code
    cache = template.__dict__.setdefault("_go_error_positions", {})
    positions = cache.get(code)
    if positions is None:
        positions = cache[code] = list(code.co_positions())
    index = frame_tb.tb_lasti // 2
    if index >= len(positions) or positions[index][0] is None:
        return 0
    return _sites_by_position(template).get(positions[index], 0)


def _sites_by_position(template: Any) -> dict:
    """(lineno, end_lineno, col, end_col) of each generated call -> its site number."""
    cached = template.__dict__.get("_go_error_sites")
    if cached is None:
        cached = {}
        for call, node in _paired_calls(template):
            where = (call.lineno, call.end_lineno, call.col_offset, call.end_col_offset)
            if node is not None and node.span[1]:
                cached.setdefault(where, node.span[1])
        template._go_error_sites = cached
    return cached


def _paired_calls(template: Any) -> list:
    """(ast.Call, IR node or None) for each call of the module's ``render``, in tree order;
    made once per template, when its first error escapes."""
    tree = ast.parse(template._emitted)
    render = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "render"), None
    )
    calls = [n for n in _preorder(render) if isinstance(n, ast.Call)] if render else []
    nodes = [
        n
        for n in _ir_preorder(template.ir.body)
        if isinstance(n, (ir.Helper, ir.CallValue))
    ]
    return _pair(calls, nodes, template.namespace)


def _pair(calls: list, nodes: list, namespace: dict) -> list:
    """Match each IR call to the next Python call that can be it (the emitter adds calls
    of its own, such as the writer's ``_w(...)``, never drops one)."""
    out: list = []
    it = iter(nodes)
    pending = next(it, None)
    for call in calls:
        if pending is not None and _same_call(call, pending, namespace):
            out.append((call, pending))
            pending = next(it, None)
        else:
            out.append((call, None))
    return out if pending is None else []  # out of step: no positions at all


def _same_call(call: ast.Call, node: Any, namespace: dict) -> bool:
    if isinstance(node, ir.CallValue):
        return not isinstance(call.func, ast.Name) or call.func.id.startswith("tmpl_")
    if not isinstance(call.func, ast.Name):
        return False
    fn = node.name.rpartition(".")[2]
    return call.func.id == fn or call.func.id.endswith("_" + fn)


def _preorder(node: ast.AST) -> list:
    out: list = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        children = list(ast.iter_child_nodes(n))
        stack.extend(reversed(children))
    return out


def _ir_preorder(body: Any) -> list:
    """ir.walk's order (parents first, children in field order), without the values the
    emitter hoists to module level."""
    nodes = list(ir.walk(body))
    hoisted = {id(m) for h in nodes if isinstance(h, ir.Hoisted) for m in ir.walk(h) if m is not h}
    return [m for m in nodes if id(m) not in hoisted]
