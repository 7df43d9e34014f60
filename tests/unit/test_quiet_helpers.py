"""Quiet renders (``compiler/quiet.py``, ``QUIET_HELPERS``): a render whose helpers never touch
the context's meter ends without reading it. Checked here through the runtime's own source:
each quiet helper, and everything it names that the runtime defines (functions, classes with
all their methods), never refers to the meter's context variables (``_live``, ``_long``) nor
to anything that does (``charge``, ``mark``, ``charge_input``, the guards...). The check is
by name over the runtime's syntax trees, so it errs towards "noisy"; known noisy helpers
must be found noisy (the check can fail).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import importlib.util
import pkgutil
import sys
import types
from typing import Optional

import pytest

from tmpl2py.compiler import compile_template, registry
from tmpl2py.compiler.quiet import QUIET_GLOBALS, QUIET_HELPERS, QUIET_METHODS, quiet
from tmpl2py.compiler.jinja.frontend import parse
from tmpl2py.compiler.passes import pipeline

#: the end's own helpers and the counter's refuels: they touch the meter by design (the
#: refuels return it in ``_m``, which the end tests; ``holding``, a list read by a loop's
#: look, as ``active`` is; ``LAZY``, the number a loop over items of no length charges)
BY_DESIGN = {
    "limits.active", "limits.clear", "limits.live", "limits.settle", "limits.refuel", "limits.refuel_loop",
    "limits.holding", "limits.LAZY",
}
METER_VARIABLES = {"_live", "_long"}


class CallGraph:
    """What each function and class of ``tmpl2py.runtime`` can run, names resolved as Python
    would: a module's own functions and classes, the names it imports from the runtime
    (``from ..limits import charge``), attributes of the runtime modules it imports
    (``bounded.charge_input``). A class counts where it is called (made) or passed to a call
    (``object.__new__(Undefined)``), not where it is only compared (``type(x) is
    Namespace``, ``isinstance``), and then as one node: once an instance exists, any of its
    methods can run (operators, ``str``). A function nested in another is its own node,
    which the outer one runs only where it calls it or passes it to a call (a closure it
    returns is run by whoever holds it: generated code runs values only through
    ``jinja.call``, which a quiet render uses for quiet globals only)."""

    def __init__(self) -> None:
        import tmpl2py.runtime as runtime

        names = ["tmpl2py.runtime"]
        names += [m.name for m in pkgutil.walk_packages(runtime.__path__, "tmpl2py.runtime.")]
        for name in names:
            importlib.import_module(name)
        self.defs: dict = {}  # (module, name) -> module-level def node
        self.modules: dict = {}  # def node -> its module
        self.places: dict = {}  # (file, first line) -> any function def node
        self.scopes: dict = {}  # module -> {local name: (module, name) or ("module", module)}
        for name in names:
            module = sys.modules[name]
            path = inspect.getsourcefile(module)
            tree = ast.parse(inspect.getsource(module))
            scope: dict = {}
            package = name if hasattr(module, "__path__") else name.rsplit(".", 1)[0]
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    self.defs[(name, node.name)] = node
                    scope[node.name] = (name, node.name)
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        base = importlib.util.resolve_name("." * node.level + base, package)
                    for alias in node.names:
                        target = f"{base}.{alias.name}"
                        local = alias.asname or alias.name
                        # every runtime module is imported above: a name that is one is one
                        scope[local] = ("module", target) if target in sys.modules else (base, alias.name)
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    self.modules[node] = name
                    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                    self.places[(path, first)] = node
            self.scopes[name] = scope
        self._edges: dict = {}

    def resolve(self, module: str, name: str) -> Optional[ast.AST]:
        key, seen = self.scopes.get(module, {}).get(name), set()
        while key is not None and key[0] != "module" and key not in self.defs and key not in seen:
            seen.add(key)
            key = self.scopes.get(key[0], {}).get(key[1])
        return self.defs.get(key) if key is not None else None

    def edges(self, node: ast.AST) -> set:
        """The nodes ``node`` can run, and "METER" if it reads or sets the meter itself."""
        if node in self._edges:
            return self._edges[node]
        module, out = self.modules[node], set()
        own = _own_nodes(node)
        nested = {n.name: n for n in own if isinstance(n, ast.FunctionDef) and n is not node}
        compared = {
            id(a) for n in own if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in ("isinstance", "issubclass", "type") for a in n.args
        }
        for n in own:
            if isinstance(n, ast.Name) and n.id in METER_VARIABLES:
                out.add("METER")
            if isinstance(n, ast.Call):
                for used in (n.func, *n.args, *(k.value for k in n.keywords)):
                    if isinstance(used, ast.Name) and used.id in nested:
                        out.add(nested[used.id])  # a closure it runs or hands on
            target = None
            if isinstance(n, ast.Name) and n.id not in nested:
                target = self.resolve(module, n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                owner = self.scopes.get(module, {}).get(n.value.id)
                if owner is not None and owner[0] == "module":
                    target = self.resolve(owner[1], n.attr)
            if target is None or target is node:
                continue
            if isinstance(target, ast.ClassDef) and (id(n) in compared or not _made(n, own)):
                continue  # a class only compared with: none is made
            out.add(target)
        if isinstance(node, ast.ClassDef):  # its methods run once an instance exists
            out.update(n for n in node.body if isinstance(n, ast.FunctionDef))
        self._edges[node] = out
        return out

    def path_to_meter(self, node: ast.AST) -> Optional[list]:
        """A chain of definitions from ``node`` to one that reads or sets the meter, or None."""
        stack, seen = [(node, [node.name])], {node}
        while stack:
            current, path = stack.pop()
            for target in self.edges(current):
                if target == "METER":
                    return path
                if target not in seen:
                    seen.add(target)
                    stack.append((target, path + [target.name]))
        return None


def _own_nodes(node: ast.AST) -> list:
    """The syntax nodes of a def, without the bodies of the functions and classes nested in
    it (their own nodes); a class's are its body's minus its methods' bodies."""
    out, stack = [], list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda)) or isinstance(n, ast.Lambda):
            stack.extend(ast.iter_child_nodes(n))
        else:
            stack.extend(n.decorator_list)
    if isinstance(node, ast.ClassDef):
        return out
    return out


def _made(name: ast.AST, own: list) -> bool:
    """Whether the class ``name`` refers to is called or passed to a call where it appears."""
    for n in own:
        if isinstance(n, ast.Call) and (
            n.func is name or name in n.args or any(k.value is name for k in n.keywords)
        ):
            return True
    return False


GRAPH = CallGraph()


def _definition(obj) -> ast.AST:
    """The runtime definition ``obj`` is: its function's def (a wrapper's, when decorated),
    or its class's."""
    code = getattr(obj, "__code__", None)
    if code is not None:
        node = GRAPH.places.get((code.co_filename, code.co_firstlineno))
        assert node is not None and node.name == code.co_name, obj
        return node
    for (module, name), node in GRAPH.defs.items():
        if name == obj.__name__ and getattr(sys.modules[module], name, None) is obj:
            return node
    raise AssertionError(f"no runtime source for {obj!r}")


def _helper_is_quiet(helper: str) -> bool:
    module, fn = registry.resolve(helper)
    if not module:
        return True  # a Python builtin
    obj = getattr(importlib.import_module(module), fn)
    if not isinstance(obj, type) and getattr(obj, "__code__", None) is None:
        # a C function of another library (operator.length_hint)
        assert isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)), helper
        return True
    node = _definition(obj)
    wrapped = getattr(obj, "__wrapped__", None)  # a decorator's wrapper runs the def it wraps
    nodes = [node] + ([_definition(wrapped)] if wrapped is not None else [])
    return all(GRAPH.path_to_meter(n) is None for n in nodes)


@pytest.mark.parametrize("helper", sorted(QUIET_HELPERS - BY_DESIGN))
def test_quiet_helper_never_touches_the_meter(helper: str) -> None:
    assert _helper_is_quiet(helper), f"{helper} can charge or mark the render's meter"


@pytest.mark.parametrize(
    "helper",
    [
        "jinja_filters.do_tojson", "jinja_filters.select_list", "jinja_filters.do_title",
        "jinja_filters.do_join", "jinja_filters.do_items", "jinja.call", "limits.concatenated",
        "limits.add_item", "jinja.generate_lorem_ipsum", "jinja.Cycler",
    ],
)
def test_the_check_finds_noisy_helpers(helper: str) -> None:
    assert not _helper_is_quiet(helper)


def _module(source: str):
    return pipeline.before_emit(pipeline.run(parse(source), profile="hf"))


def _end_reads_the_meter(source: str) -> bool:
    code = compile_template(source).python_source
    end = [line for line in code.splitlines() if line.strip().startswith("if ") and "len(_out) >" in line]
    assert len(end) == 1, code
    return "live()" in end[0]


@pytest.mark.parametrize(
    "source",
    [
        "{% for m in messages %}{{ m.role | trim }}{% endfor %}",
        "{% if x %}{{ raise_exception('no') }}{% endif %}{{ messages[0]['content'] }}",
        "{{ strftime_now('%Y') }}{% for m in messages %}{% if loop.last %}{{ m }}{% endif %}{% endfor %}",
        "{% for m in messages %}{{ m.content.strip() }}{{ m['content'].partition(',') }}{% endfor %}",
        "{% for m in messages %}{{ m.content.strip('\\n') }}{{ m.content.rstrip(' ') }}{% endfor %}",
        "{% for m in messages %}{{ (m.content | trim).startswith('a') }}{{ m.items() | first }}{% endfor %}",
    ],
)
def test_a_quiet_render_ends_without_reading_the_meter(source: str) -> None:
    assert not _end_reads_the_meter(source)


@pytest.mark.parametrize(
    "source",
    [
        "{{ tools | tojson }}",  # a filter that charges its input
        "{% set raise_exception = x %}{{ raise_exception('no') }}",  # the template binds it
        "{{ f('no') }}",  # a value that is no quiet global
        "{{ s.join(l) }}",  # a growing method, through the sandbox's call
        "{{ 'ab' * n }}",  # a repetition's size guard
        "{{ s.format(1) }}",  # the sandbox's str.format wrapper charges
        "{{ s.center(n) }}",  # a growing method: its width is checked
        "{{ dict.fromkeys(l, s) }}",  # the environment's dict: its result is weighed
        "{% for m in messages %}{{ m.content | join(',') }}{% endfor %}",
        "{% for m in messages %}{{ m['content'].split(',') }}{% endfor %}",  # a long text's pieces
        "{% for m in messages %}{{ m.content.strip(chars) }}{% endfor %}",  # text x chars
    ],
)
def test_a_render_that_may_touch_the_meter_reads_it(source: str) -> None:
    assert _end_reads_the_meter(source)


def test_quiet_globals_raise_or_format() -> None:
    from tmpl2py.runtime.jinja.access import GLOBALS

    for name in QUIET_GLOBALS:
        assert _helper_is_quiet_object(GLOBALS[name]), name


def _helper_is_quiet_object(obj) -> bool:
    return GRAPH.path_to_meter(_definition(obj)) is None


def test_quiet_reads_the_calls() -> None:
    module = _module("{{ raise_exception('a') }}")
    assert quiet(module, {"jinja.call", "jinja.to_str"})
    module = _module("{% set raise_exception = 1 %}{{ raise_exception('a') }}")
    assert not quiet(module, {"jinja.call", "jinja.to_str"})


def test_quiet_methods_grow_nothing() -> None:
    """Each quiet method is a builtin method of ``str`` / ``dict`` / ``list`` (C code that never
    charges), none that can make a value longer than its receiver or the sandbox wraps."""
    from tmpl2py.runtime.jinja.bounded import GROWING_STR_METHODS

    assert not QUIET_METHODS & GROWING_STR_METHODS
    assert not QUIET_METHODS & {"format", "format_map", "fromkeys", "join", "replace", "center"}
    for name in QUIET_METHODS:
        found = [getattr(t, name) for t in (str, dict, list) if hasattr(t, name)]
        assert found, name
        assert all(type(m).__name__ == "method_descriptor" for m in found), name
