"""The Go template parse tree: the frontend's intermediate form between Lark and the IR.

A small mirror of ``text/template/parse`` nodes (ListNode, ActionNode, IfNode, ...), kept
because Ollama inspects the parse tree itself: ``Template.Vars`` collects identifiers
(``identifiers``) and the legacy Prompt/Response mode executes a copy of the tree cut
after the first ``.Response`` field (``cut_after_response``, Ollama's ``deleteNode``).
``str(node)`` gives the node back as template source, as Go's ``Node.String`` does
(used in error messages).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Node:
    pos: int = field(default=0, compare=False, kw_only=True)  # byte offset in the source
    line: int = field(default=0, compare=False, kw_only=True)


# ----------------------------------------------------------------------------- operands


@dataclass(frozen=True)
class Field(Node):
    idents: tuple[str, ...]

    def __str__(self) -> str:
        return "".join("." + i for i in self.idents)


@dataclass(frozen=True)
class Variable(Node):
    idents: tuple[str, ...]  # idents[0] is "$" or "$name"

    def __str__(self) -> str:
        return ".".join(self.idents)


@dataclass(frozen=True)
class Dot(Node):
    def __str__(self) -> str:
        return "."


@dataclass(frozen=True)
class Nil(Node):
    def __str__(self) -> str:
        return "nil"


@dataclass(frozen=True)
class Bool(Node):
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True)
class Number(Node):
    """A number constant. ``kind`` is how Go's idealConstant types it when no parameter
    type says otherwise: "int", "float", "complex", or "overflow" (an exec-time error)."""

    text: str
    kind: str
    value: Any
    is_int: bool = False  # usable where a Go int parameter is expected
    int_value: int = 0

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class String(Node):
    quoted: str
    value: str

    def __str__(self) -> str:
        return self.quoted


@dataclass(frozen=True)
class Identifier(Node):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Chain(Node):
    node: Operand
    fields: tuple[str, ...]

    def __str__(self) -> str:
        inner = str(self.node)
        if isinstance(self.node, Pipe):
            inner = "(" + inner + ")"
        return inner + "".join("." + f for f in self.fields)


@dataclass(frozen=True)
class Command(Node):
    args: tuple[Operand, ...]

    def __str__(self) -> str:
        parts = []
        for arg in self.args:
            text = str(arg)
            parts.append("(" + text + ")" if isinstance(arg, Pipe) else text)
        return " ".join(parts)


@dataclass(frozen=True)
class Pipe(Node):
    decls: tuple[Variable, ...]
    is_assign: bool
    cmds: tuple[Command, ...]

    def __str__(self) -> str:
        text = ""
        if self.decls:
            text = ", ".join(str(d) for d in self.decls) + (" = " if self.is_assign else " := ")
        return text + " | ".join(str(c) for c in self.cmds)


Operand = Field | Variable | Dot | Nil | Bool | Number | String | Identifier | Chain | Pipe

# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Text(Node):
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Action(Node):
    pipe: Pipe

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@dataclass(frozen=True)
class Branch(Node):
    """IfNode / RangeNode / WithNode (``kind`` is "if", "range" or "with")."""

    kind: str
    pipe: Pipe
    body: ListNode
    else_body: ListNode | None = None

    def __str__(self) -> str:
        text = "{{" + self.kind + " " + str(self.pipe) + "}}" + str(self.body)
        if self.else_body is not None:
            text += "{{else}}" + str(self.else_body)
        return text + "{{end}}"


@dataclass(frozen=True)
class TemplateCall(Node):
    name: str
    pipe: Pipe | None

    def __str__(self) -> str:
        from .literals import go_quote

        if self.pipe is None:
            return "{{template " + go_quote(self.name) + "}}"
        return "{{template " + go_quote(self.name) + " " + str(self.pipe) + "}}"


@dataclass(frozen=True)
class Break(Node):
    def __str__(self) -> str:
        return "{{break}}"


@dataclass(frozen=True)
class Continue(Node):
    def __str__(self) -> str:
        return "{{continue}}"


@dataclass(frozen=True)
class ListNode(Node):
    nodes: tuple[Any, ...]

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


Stmt = Text | Action | Branch | TemplateCall | Break | Continue


# ----------------------------------------------------------------------------- Ollama's tree walks


def identifiers(node: Any) -> list[str]:
    """Ollama's ``template.Identifiers``: field and variable names, walking only what it walks
    (lists, actions, branch pipes and bodies, template pipes, nested pipes; not chains)."""
    if isinstance(node, ListNode):
        return [name for child in node.nodes for name in identifiers(child)]
    if isinstance(node, TemplateCall):
        if node.pipe is None:
            raise UndefinedTemplate()
        return identifiers(node.pipe)
    if isinstance(node, Action):
        return identifiers(node.pipe)
    if isinstance(node, Branch):
        names = identifiers(node.pipe) + identifiers(node.body)
        if node.else_body is not None:
            names += identifiers(node.else_body)
        return names
    if isinstance(node, Pipe):
        return [name for cmd in node.cmds for arg in cmd.args for name in identifiers(arg)]
    if isinstance(node, (Field, Variable)):
        return list(node.idents)
    return []


class UndefinedTemplate(Exception):
    """``{{template "x"}}`` without a pipeline: Ollama refuses such templates."""


class CutPanic(Exception):
    """Ollama's deleteNode panics (a nil node where a branch or list is asserted)."""


def cut_after_response(root: ListNode) -> ListNode:
    """Ollama's ``deleteNode(root, after first .Response field)``: every node visited after
    the first ``FieldNode`` whose idents contain "Response" is deleted. Raises ``CutPanic``
    where Go's type assertions on a deleted branch or list would panic."""
    cut = False

    def doomed(node: Any) -> bool:
        nonlocal cut
        if isinstance(node, Field) and "Response" in node.idents:
            cut = True
            return False
        return cut

    def walk_list(node: ListNode, what: str) -> ListNode:
        result = walk(node)
        if result is None:
            raise CutPanic(f"interface conversion: parse.Node is nil, not *parse.{what}")
        return result

    def walk(node: Any) -> Any:
        if doomed(node):
            return None
        if isinstance(node, ListNode):
            kept = tuple(n for n in (walk(child) for child in node.nodes) if n is not None)
            return replace(node, nodes=kept)
        if isinstance(node, Branch):
            if doomed(("branch", node)):  # the BranchNode is visited as a node of its own
                raise CutPanic("interface conversion: parse.Node is nil, not *parse.BranchNode")
            body = walk_list(node.body, "ListNode")
            else_body = None if node.else_body is None else walk_list(node.else_body, "ListNode")
            return replace(node, body=body, else_body=else_body)
        if isinstance(node, Action):
            pipe = walk(node.pipe)
            return None if pipe is None else replace(node, pipe=pipe)
        if isinstance(node, Pipe):
            cmds = []
            for cmd in node.cmds:
                args = tuple(a for a in (walk(arg) for arg in cmd.args) if a is not None)
                if not args:
                    return None
                cmds.append(replace(cmd, args=args))
            if not cmds:
                return None
            return replace(node, cmds=tuple(cmds))
        return node

    return walk(root)


# ----------------------------------------------------------------------------- tool uses

_ROOT, _TOOLS, _TOOL, _OTHER = "root", "tools", "tool", "other"


class _Refused(Exception):
    """A use of the tools (or of the root data) the analysis does not admit."""


def tools_only_marshalled(root: ListNode) -> bool:
    """Does the (messages-mode) template use ``.Tools`` only in ways that see nothing of a
    tool but its JSON? Truth tests (``if .Tools``, ``if or .System .Tools``), ``len``,
    ``json .Tools``, printing ``.Tools`` (its String method is its JSON) and ranging over
    it with the element only marshalled (``range $t := .Tools`` ... ``json $t``). Then the
    runtime may give the template tools that carry their JSON text only (``ollama.JsonTool``,
    the compiler's ``GO_TOOLS_JSON``). Conservative: anything else (a field of a tool,
    printing a tool, the root data or a tool passed to any other function, defined templates,
    tools in variables other than a range's) answers False."""
    try:
        _uses_list(root, _ROOT, {})
    except _Refused:
        return False
    return True


def _uses_list(node: ListNode, dot: str, variables: dict) -> None:
    for child in node.nodes:
        if isinstance(child, Action):
            kind = _pipe_kind(child.pipe, dot, variables, "print")
            if child.pipe.decls:
                _declare(child.pipe, kind, variables)
            elif kind in (_TOOL, _ROOT):
                raise _Refused  # printed with %v: its fields
        elif isinstance(child, Branch):
            _uses_branch(child, dot, variables)
        elif isinstance(child, TemplateCall):
            raise _Refused
        # (Text, Break, Continue: nothing)


def _uses_branch(node: Branch, dot: str, variables: dict) -> None:
    pipe = node.pipe
    kind = _pipe_kind(pipe, dot, variables, "if" if node.kind == "if" else "value")
    inner = dict(variables)
    body_dot = dot
    if node.kind == "range":
        if kind == _TOOLS:
            element = _TOOL
        elif kind == _OTHER:
            element = _OTHER
        else:
            raise _Refused  # ranging over the root map or over a tool
        if pipe.decls:
            if pipe.is_assign:
                raise _Refused
            names = [d.idents[0] for d in pipe.decls]
            for name in names[:-1]:
                inner[name] = _OTHER  # the index
            inner[names[-1]] = element
        body_dot = element
    else:
        _declare(pipe, kind, inner)
        if node.kind == "with":
            if kind not in (_OTHER, _ROOT):
                raise _Refused
            body_dot = kind
    _uses_list(node.body, body_dot, inner)
    if node.else_body is not None:
        _uses_list(node.else_body, dot, dict(variables))


def _declare(pipe: Pipe, kind: str, variables: dict) -> None:
    """The variables ``pipe`` declares (or assigns) hold its value: only a plain value may be
    kept in one (an assignment leaves a variable's kind as it was: the stricter)."""
    if not pipe.decls:
        return
    if kind != _OTHER:
        raise _Refused
    if not pipe.is_assign:
        for decl in pipe.decls:
            variables[decl.idents[0]] = _OTHER


def _pipe_kind(pipe: Pipe, dot: str, variables: dict, context: str) -> str:
    """The kind of a pipeline's value; ``context`` is where it goes: "if" (its truth only),
    "print" or "value" (anywhere else)."""
    prev: str | None = None
    for i, cmd in enumerate(pipe.cmds):
        final = i == len(pipe.cmds) - 1
        prev = _command_kind(cmd, prev, dot, variables, final and context == "if")
    assert prev is not None
    return prev


def _command_kind(
    cmd: Command, prev: str | None, dot: str, variables: dict, truth_only: bool
) -> str:
    head = cmd.args[0]
    if not isinstance(head, Identifier):
        if len(cmd.args) > 1 or prev is not None:
            raise _Refused  # (an error in Go: leave it to the general path)
        return _operand_kind(head, dot, variables)
    kinds = [_operand_kind(a, dot, variables) for a in cmd.args[1:]]
    if prev is not None:
        kinds.append(prev)
    name = head.name
    if name == "json" and len(kinds) == 1 and kinds[0] != _ROOT:
        return _OTHER
    if name == "len" or name == "not":
        return _OTHER  # (an int, a bool: their argument's JSON and fields unread)
    if name in ("and", "or") and truth_only:
        return _OTHER  # (one of the arguments, but only its truth is seen)
    if any(k != _OTHER for k in kinds):
        raise _Refused
    return _OTHER


def _operand_kind(op: Any, dot: str, variables: dict) -> str:
    if isinstance(op, Dot):
        return dot
    if isinstance(op, Field):
        return _fields_kind(dot, op.idents)
    if isinstance(op, Variable):
        name = op.idents[0]
        base = _ROOT if name == "$" else variables.get(name, _OTHER)
        return _fields_kind(base, op.idents[1:])
    if isinstance(op, Chain):
        base = _operand_kind(op.node, dot, variables)
        if base != _OTHER:
            raise _Refused
        return _OTHER
    if isinstance(op, Pipe):
        if op.decls:
            raise _Refused
        return _pipe_kind(op, dot, variables, "value")
    return _OTHER  # literals; an identifier here is a call without arguments


def _fields_kind(base: str, idents: tuple) -> str:
    if not idents:
        return base
    if base == _ROOT:
        if idents[0] != "Tools":
            return _OTHER
        if len(idents) == 1:
            return _TOOLS
        raise _Refused
    if base != _OTHER:
        raise _Refused  # a field (or method) of the tools or of a tool
    return _OTHER


# ----------------------------------------------------------------------------- error positions


def go_position(node: Node) -> int:
    """Go's ``Node.Position()`` of ``node`` (a byte offset in the source).

    Go's parser gives a field chain the position of its *second* element (parse.go
    ``operand``: the chain is made at the next token, then turned back into a field or
    variable node at the chain's position): ``.a.b`` is at ``.b``, ``$x.b`` at ``.b``.
    Our lexer reads ``.a.b`` as one token, so the offset is computed here."""
    if isinstance(node, Field) and len(node.idents) > 1:
        return node.pos + 1 + len(node.idents[0])
    if isinstance(node, Variable) and len(node.idents) > 1:
        return node.pos + len(node.idents[0])
    return node.pos


def last_evaluated(node: Any) -> Any | None:
    """The node Go's ``state.node`` points at once ``node`` has been evaluated (exec.go
    calls ``s.at`` on each node as it starts evaluating it), or None when that depends
    on run-time values (``and`` / ``or`` skip arguments).

    A range over a bad value reports this node of its pipeline; so does a field of a
    parenthesised chain ``(pipe).f``."""
    if isinstance(node, Pipe):
        return last_evaluated(node.cmds[-1]) if node.cmds else None
    if isinstance(node, Chain):
        return last_evaluated(node.node)
    if isinstance(node, Command):
        first = node.args[0]
        if isinstance(first, Identifier):
            if len(node.args) == 1:
                return first  # evalFunction's s.at(identifier); a piped value is not at'ed
            if first.name in ("and", "or"):
                return None
            return last_evaluated(node.args[-1])
        if len(node.args) > 1:
            return None  # a method call with arguments: not modelled
        return last_evaluated(first)
    return node
