"""Ollama's ``Template.Execute``: the ``ollama`` profile's conversation entry point.
Long because Ollama's request binding, message preparation, tool structures and the legacy
prompt/response mode are the steps of one entry point.

Long because it holds every view type Ollama's templates see (their fields, methods, JSON
and fast paths) next to the request shaping that builds them. Standard library only. Turns /api/chat-shaped input (messages, tools, think) into what
Ollama's templates see and runs the compiled template the way Ollama does
(template/template.go at fb307609, reproduced by tests/goref/main.go):

- consecutive messages of the same role (except ``tool``) are merged with "\\n\\n"; a
  message's role is lower-cased; ``.System`` is every system content joined by "\\n\\n";
- a template that mentions ``messages`` (any case, as a field or variable) runs once with
  ``System, Messages, Tools, Response: "", Think, ThinkLevel, IsThinkSet``;
- any other template runs in the legacy mode: once per complete (system, user,
  assistant) turn with ``System, Prompt, Response``, then the last turn on a copy of the
  tree cut after the first ``.Response`` (compiled as the template's cut branch, run
  through ``CutRun``: no funcs, no defined templates).

The view types below are Ollama's template-facing types; their fields, methods,
``String`` output (JSON with Ollama's key order) and Go type names (``main.*``, as the
reference program names them) are what templates print and what errors mention.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable
from typing import Any

from . import execute as gotmpl
from .fmt import (
    GoBytes,
    GoMap,
    GoNil,
    GoSlice,
    GoString,
    GoStruct,
    format_value,
    json_string,
    json_text,
    marshal,
    to_lower,
)

# ----------------------------------------------------------------------------- view types


def _struct(
    name: str, fields: tuple, pointer: bool = False, methods: frozenset = frozenset()
) -> Any:
    """Declare a GoStruct subclass: ``fields`` are (Go name, Go type, json name, omitempty)."""
    attrs = {
        "__slots__": tuple(f[0] for f in fields),
        "go_type": "main." + name,
        "go_pointer": pointer,
        "go_fields": fields,
        "go_methods": methods,
    }

    names = tuple(f[0] for f in fields)

    def __init__(self: Any, **values: Any) -> None:
        for fname in names:
            setattr(self, fname, values[fname])

    def __repr__(self: Any) -> str:
        return f"{name}({', '.join(f'{f[0]}={getattr(self, f[0])!r}' for f in fields)})"

    attrs["__init__"] = __init__
    attrs["__repr__"] = __repr__
    return type(name, (GoStruct,), attrs)


class PropertyType(GoSlice):
    """api.PropertyType: a JSON Schema type, a string or a list of strings."""

    go_type = "main.PropertyType"
    go_methods = frozenset({"String"})

    def String(self) -> str:
        if not self:
            return ""
        if len(self) == 1:
            return self[0]
        return format_value(list(self))

    def MarshalJSON(self) -> str:
        if len(self) == 1:
            return marshal(self[0])
        return "null" if self.nil else marshal(list(self))

    def go_json_text(self) -> str:  # MarshalJSON, for marshal's fast path
        if len(self) == 1:
            return json_string(self[0])
        return "null" if self.nil else "[" + ",".join(map(json_string, self)) + "]"


class ToolPropertiesMap(GoStruct):
    """api.ToolPropertiesMap: nested properties, marshalled in input order."""

    __slots__ = ("om",)
    go_type = "main.ToolPropertiesMap"
    go_pointer = True
    go_fields = ()
    # its one field is an unexported pointer (name, Go type as the reference names it):
    # fmt prints an address
    go_opaque = ("om", "*main.orderedMap[main.ToolProperty]")
    go_methods = frozenset({"ToMap"})

    def __init__(self, om: dict) -> None:
        self.om = om

    def MarshalJSON(self) -> str:
        return "{" + ",".join(marshal(k) + ":" + marshal(v) for k, v in self.om.items()) + "}"

    def go_json_text(self) -> str:  # MarshalJSON, for marshal's fast path
        return (
            "{" + ",".join([json_string(k) + ":" + json_text(v) for k, v in self.om.items()]) + "}"
        )

    def ToMap(self) -> GoMap:
        m = _PlainPropertyMap(self.om)
        return m


class _PlainPropertyMap(GoMap):
    go_type = "map[string]main.ToolProperty"
    go_elem_type = "main.ToolProperty"

    @staticmethod
    def go_zero() -> Any:
        return _zero_property()


class _NilPropertiesMap(GoNil):
    """A nil *api.ToolPropertiesMap (``Properties`` absent). Go calls a method of a nil
    pointer receiver: ``ToMap`` answers a nil map, as its nil check says; its one field
    ``om`` is a field of the pointed-to struct (reading it is a nil pointer error)."""

    __slots__ = ()
    go_methods = frozenset({"ToMap"})
    go_pointee_fields = ("om",)

    def ToMap(self) -> GoMap:
        m = _PlainPropertyMap()
        m.nil = True
        return m


def _to_typescript(prop: Any) -> str:
    """api.ToolProperty.ToTypeScriptType."""
    if prop.AnyOf:
        return " | ".join(_to_typescript(p) for p in prop.AnyOf)
    if not prop.Type:
        return "any"
    return " | ".join(_TS_TYPES.get(t, "any") for t in prop.Type)


_TS_TYPES = {
    "string": "string",
    "number": "number",
    "integer": "number",
    "boolean": "boolean",
    "array": "any[]",
    "object": "Record<string, any>",
    "null": "null",
}

ToolProperty = _struct(
    "ToolProperty",
    (
        ("AnyOf", "[]main.ToolProperty", "anyOf", True),
        ("Type", "main.PropertyType", "type", True),
        ("Items", "interface {}", "items", True),
        ("Description", "string", "description", True),
        ("Enum", "[]interface {}", "enum", True),
        ("Properties", "*main.ToolPropertiesMap", "properties", True),
    ),
    methods=frozenset({"ToTypeScriptType"}),
)
ToolProperty.ToTypeScriptType = lambda self: _to_typescript(self)  # type: ignore[attr-defined]


def _zero_property() -> Any:
    return ToolProperty(
        AnyOf=_slice([], "[]main.ToolProperty", nil=True),
        Type=_prop_type(None),
        Items=None,
        Description="",
        Enum=_slice([], "[]interface {}", nil=True),
        Properties=_NilPropertiesMap("*main.ToolPropertiesMap"),
    )


class TemplateProperties(GoMap):
    """template.templateProperties: map[string]ToolProperty printing as sorted JSON."""

    go_type = "main.templateProperties"
    go_elem_type = "main.ToolProperty"
    go_methods = frozenset({"String"})

    @staticmethod
    def go_zero() -> Any:
        return _zero_property()

    def String(self) -> str:
        return "{}" if self.nil else marshal(self)


class TemplateArgs(GoMap):
    """template.templateArgs: tool-call arguments, printing as sorted JSON."""

    go_type = "main.templateArgs"
    go_methods = frozenset({"String"})

    def String(self) -> str:
        return "{}" if self.nil else marshal(self)


class TemplateTools(GoSlice):
    """template.templateTools: printing as JSON."""

    go_type = "main.templateTools"
    go_methods = frozenset({"String"})

    def String(self) -> str:
        return marshal(self)


TemplateToolFunctionParameters = _struct(
    "templateToolFunctionParameters",
    (
        ("Type", "string", "type", False),
        ("Defs", "interface {}", "$defs", True),
        ("Items", "interface {}", "items", True),
        ("Required", "[]string", "required", True),
        ("Properties", "main.templateProperties", "properties", False),
    ),
)
TemplateToolFunction = _struct(
    "templateToolFunction",
    (
        ("Name", "string", "name", False),
        ("Description", "string", "description", False),
        ("Parameters", "main.templateToolFunctionParameters", "parameters", False),
    ),
)
TemplateTool = _struct(
    "templateTool",
    (
        ("Type", "string", "type", False),
        ("Items", "interface {}", "items", True),
        ("Function", "main.templateToolFunction", "function", False),
    ),
)


# marshal's fast path (json_text): the JSON of the tool types, field by field as their
# go_fields declare them (omitempty: an interface when nil, a slice or string when empty);
# fields of a view type the shaping made (a template cannot change them) written directly
def _property_json(p: Any) -> str:
    text = ""  # the fields, each after a comma
    if p.AnyOf:
        text = ',"anyOf":[' + ",".join([_property_json(x) for x in p.AnyOf]) + "]"
    typ = p.Type
    if typ:
        text += ',"type":' + (json_string(typ[0]) if len(typ) == 1 else typ.go_json_text())
    if p.Items is not None:
        text += ',"items":' + json_text(p.Items)
    if p.Description:
        text += ',"description":' + json_string(p.Description)
    if p.Enum:  # (a non-nil []interface {} of JSON data)
        text += ',"enum":[' + ",".join([json_text(e) for e in p.Enum]) + "]"
    if type(p.Properties) is ToolPropertiesMap:  # (otherwise a nil pointer: omitted)
        text += ',"properties":' + p.Properties.go_json_text()
    return "{" + text[1:] + "}"


def _parameters_json(p: Any) -> str:
    text = '{"type":' + json_string(p.Type)
    if p.Defs is not None:
        text += ',"$defs":' + json_text(p.Defs)
    if p.Items is not None:
        text += ',"items":' + json_text(p.Items)
    if p.Required:
        text += ',"required":[' + ",".join(map(json_string, p.Required)) + "]"
    properties = p.Properties
    if properties.nil:
        return text + ',"properties":null}'
    # (keys by code point: by UTF-8 bytes unless one is invalid, which marshal checks)
    items = [json_string(k) + ":" + _property_json(v) for k, v in sorted(properties.items())]
    return text + ',"properties":{' + ",".join(items) + "}}"


def _function_json(f: Any) -> str:
    return (
        '{"name":'
        + json_string(f.Name)
        + ',"description":'
        + json_string(f.Description)
        + ',"parameters":'
        + _parameters_json(f.Parameters)
        + "}"
    )


def _tool_json(t: Any) -> str:
    text = '{"type":' + json_string(t.Type)
    if t.Items is not None:
        text += ',"items":' + json_text(t.Items)
    f = t.Function  # (a templateToolFunction the shaping made: written here)
    return (
        text
        + ',"function":{"name":'
        + json_string(f.Name)
        + ',"description":'
        + json_string(f.Description)
        + ',"parameters":'
        + _parameters_json(f.Parameters)
        + "}}"
    )


ToolProperty.go_json_text = _property_json  # type: ignore[attr-defined]
TemplateToolFunctionParameters.go_json_text = _parameters_json
TemplateToolFunction.go_json_text = _function_json
TemplateTool.go_json_text = _tool_json

TemplateToolCallFunction = _struct(
    "templateToolCallFunction",
    (
        ("Index", "int", None, False),
        ("Name", "string", None, False),
        ("Arguments", "main.templateArgs", None, False),
    ),
)
TemplateToolCall = _struct(
    "templateToolCall",
    (("ID", "string", None, False), ("Function", "main.templateToolCallFunction", None, False)),
)
TemplateMessage = _struct(
    "templateMessage",
    (
        ("Role", "string", None, False),
        ("Content", "string", None, False),
        ("Thinking", "string", None, False),
        ("Images", "[]main.ImageData", None, False),
        ("ToolCalls", "[]main.templateToolCall", None, False),
        ("ToolName", "string", None, False),
        ("ToolCallID", "string", None, False),
    ),
    pointer=True,
)


class ImageData(GoBytes):
    go_type = "main.ImageData"


class _NilImageData(ImageData):
    """A nil ``ImageData`` (a JSON ``null`` in a message's images): marshals as ``null``."""

    nil = True


_NIL_IMAGE = _NilImageData()


_NIL_SLICES: dict = {}


def _slice(items: Iterable, go_type: str, nil: bool = False, cls: type = GoSlice) -> Any:
    if nil and not items:  # one shared nil slice per type (templates cannot change a slice)
        s = _NIL_SLICES.get((go_type, cls))
        if s is None:
            s = _NIL_SLICES.setdefault((go_type, cls), _slice((), go_type, False, cls))
            s.nil = True
        return s
    s = cls(items)
    s.go_type = go_type
    s.nil = nil
    return s


def _prop_type(value: Any) -> Any:
    if value is None:
        return _slice([], "main.PropertyType", nil=True, cls=PropertyType)
    if isinstance(value, str):
        return _slice([GoString(value)], "main.PropertyType", cls=PropertyType)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return _slice([GoString(v) for v in value], "main.PropertyType", cls=PropertyType)
    raise RequestError(
        "json: cannot unmarshal into Go struct field ToolProperty.type of type string"
    )


# ----------------------------------------------------------------------------- request decoding


class RequestError(ValueError):
    """Input Ollama would reject (its JSON binding or ThinkValue validation)."""


def _str(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RequestError(
            f"json: cannot unmarshal {type(value).__name__} into Go struct field {what} of type string"
        )
    return str.__str__(value)  # exactly a str (a subclass's data): what Go's string holds


def _property(raw: Any) -> Any:
    if type(raw) is not dict:
        if raw is None:
            return _zero_property()
        if not isinstance(raw, dict):
            raise RequestError("json: cannot unmarshal into Go value of type api.ToolProperty")
    get = raw.get
    any_of, typ, items = get("anyOf"), get("type"), get("items")
    description, enum, props = get("description"), get("enum"), get("properties")
    # fields in Go's binding order (the first error wins); class defaults where they agree
    p = _new(ToolProperty)
    p.AnyOf = (
        _slice([_property(x) for x in any_of], "[]main.ToolProperty")
        if any_of
        else _NIL_PROPERTY_LIST
    )
    p.Type = (
        _SCHEMA_TYPES.get(typ) or PropertyType((GoString(typ),))
        if type(typ) is str
        else _prop_type(typ)
    )
    p.Items = None if items is None else plain_data(items)
    p.Description = (
        description if type(description) is str else _str(description, "ToolProperty.description")
    )
    p.Enum = (
        _NIL_ENUM
        if enum is None
        else GoSlice(plain_data(enum))
        if isinstance(enum, (list, tuple))
        else _refused(enum, "ToolProperty.enum of type []interface {}")
    )
    p.Properties = (
        _NIL_PROPERTIES_MAP
        if props is None
        else ToolPropertiesMap(
            {k if type(k) is str else str(k): _property(v) for k, v in props.items()}
        )
    )
    return p


_new = object.__new__
plain_data = gotmpl.plain_data
_NIL_PROPERTY_LIST = _slice((), "[]main.ToolProperty", nil=True)
_NIL_ENUM = _slice((), "[]interface {}", nil=True)
_NIL_PROPERTIES_MAP = _NilPropertiesMap("*main.ToolPropertiesMap")
#: the PropertyType of each JSON Schema type name, shared (templates cannot change a slice)
_SCHEMA_TYPES = {
    t: PropertyType((GoString(t),))
    for t in ("string", "number", "integer", "boolean", "array", "object", "null")
}


def _object(value: Any, where: str) -> dict:
    """A JSON object field of the request (``null`` or absent: Go's zero value, ``{}``); any
    other kind is Go's binding error, as a typed refusal."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return _refused(value, where)


def _refused(value: Any, where: str) -> Any:
    """Go's binding error for a field given a value of another JSON kind."""
    raise RequestError(f"json: cannot unmarshal {_json_kind(value)} into Go struct field {where}")


def _json_kind(value: Any) -> str:
    """The JSON kind Go's binding errors name for ``value``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _tool(raw: Any) -> Any:
    if raw is None:
        raw = {}  # (a JSON null in the list: Go's zero Tool)
    if type(raw) is not dict and not isinstance(raw, dict):
        raise RequestError("json: cannot unmarshal into Go value of type api.Tool")
    fn = _object(raw.get("function"), "Tool.function of type api.ToolFunction")
    params = _object(fn.get("parameters"), "ToolFunction.parameters of type api.ToolFunctionParameters")
    props = params.get("properties")
    if props is not None and not isinstance(props, dict):
        _refused(props, "ToolFunctionParameters.properties of type map[string]api.ToolProperty")
    required = params.get("required")
    properties = TemplateProperties(
        {k if type(k) is str else str(k): _property(v) for k, v in (props or {}).items()}
    )
    if props is None:
        properties.nil = True
    # the remaining fields in the order of Go's binding (plain strings and absent values
    # take the short paths)
    typ, items = raw.get("type"), raw.get("items")
    name, description = fn.get("name"), fn.get("description")
    ptype, defs, pitems = params.get("type"), params.get("$defs"), params.get("items")
    tool = _new(TemplateTool)
    tool.Type = typ if type(typ) is str else _str(typ, "Tool.type")
    tool.Items = None if items is None else plain_data(items)
    tool.Function = function = _new(TemplateToolFunction)
    function.Name = name if type(name) is str else _str(name, "ToolFunction.name")
    function.Description = (
        description if type(description) is str else _str(description, "ToolFunction.description")
    )
    function.Parameters = parameters = _new(TemplateToolFunctionParameters)
    parameters.Type = ptype if type(ptype) is str else _str(ptype, "ToolFunctionParameters.type")
    parameters.Defs = None if defs is None else plain_data(defs)
    parameters.Items = None if pitems is None else plain_data(pitems)
    parameters.Required = (
        _NIL_STRINGS
        if required is None
        else _Strings(
            [
                GoString(r if type(r) is str else _str(r, "parameters.required"))
                for r in required
            ]
        )
        if isinstance(required, (list, tuple))
        else _refused(required, "ToolFunctionParameters.required of type []string")
    )
    parameters.Properties = properties
    return tool


class _Strings(GoSlice):
    """A []string (the type a class default: no attribute stores per slice)."""

    go_type = "[]string"


_NIL_STRINGS = _slice((), "[]string", nil=True, cls=_Strings)


# --- tools a template only marshals (the compiler proves it: GO_TOOLS_JSON) ---------------
class JsonTool(GoStruct):
    """A tool of a template that only marshals its tools (``json $tool``, ``json .Tools``,
    printed ``.Tools``): its JSON text written straight from the request, no view made.
    The view (``_tool``) is made only if something still reads a field (or marshals it the
    exact way), so it behaves as the view would."""

    __slots__ = ("raw", "text", "view")
    go_type = TemplateTool.go_type
    go_fields = TemplateTool.go_fields

    def go_json_text(self) -> str:  # marshal's fast path: the text made from the request
        return self.text

    def MarshalJSON(self) -> str:  # marshal's exact path (invalid UTF-8 in a string ...)
        return marshal(self._view())

    def _view(self) -> Any:
        if self.view is None:
            self.view = _tool(self.raw)
        return self.view

    def __getattr__(self, name: str) -> Any:  # (only for names that are no slot)
        if name in TemplateTool.go_field_types:
            return getattr(self._view(), name)
        raise AttributeError(name)


def json_tool(raw: Any) -> Any:
    """``_tool(raw)`` for a template that only marshals it: a JsonTool when ``raw`` has the
    usual shape (``_tool_text``), the view itself otherwise (its errors are _tool's)."""
    text = _tool_text(raw)
    if text is None:
        return _tool(raw)
    tool = _new(JsonTool)
    tool.raw, tool.text, tool.view = raw, text, None
    return tool


def _tool_text(raw: Any) -> str | None:
    """``json_text(_tool(raw))`` written from the request, for the usual tool only (plain
    dicts, lists and strings; a property with a type and at most a description, an enum of
    strings and items of strings); None for anything else, which the view handles."""
    if type(raw) is not dict:
        return None
    typ, fn = raw.get("type"), raw.get("function")
    if type(typ) is not str or type(fn) is not dict or raw.get("items") is not None:
        return None
    name, description, params = fn.get("name"), fn.get("description"), fn.get("parameters")
    if type(name) is not str or type(description) is not str or type(params) is not dict:
        return None
    ptype, props, required = params.get("type"), params.get("properties"), params.get("required")
    if type(ptype) is not str or params.get("$defs") is not None or params.get("items") is not None:
        return None
    text = (
        '{"type":'
        + json_string(typ)
        + ',"function":{"name":'
        + json_string(name)
        + ',"description":'
        + json_string(description)
        + ',"parameters":{"type":'
        + json_string(ptype)
    )
    required_text = _strings_text(',"required":', required)
    if required_text is None:
        return None
    text += required_text
    if props is None:
        return text + ',"properties":null}}}'
    if type(props) is not dict:
        return None
    for k in props:
        if type(k) is not str:
            return None
    items = []
    for k in sorted(props):  # (a map: keys by code point, as _parameters_json)
        prop = _property_text(props[k])
        if prop is None:
            return None
        items.append(json_string(k) + ":" + prop)
    return text + ',"properties":{' + ",".join(items) + "}}}}"


def _property_text(raw: Any) -> str | None:
    """``_property_json(_property(raw))`` for the usual property, else None."""
    if type(raw) is not dict:
        return None
    get = raw.get
    if get("anyOf") is not None or get("properties") is not None:
        return None
    typ, items, description, enum = get("type"), get("items"), get("description"), get("enum")
    if type(typ) is not str:
        return None
    text = '{"type":' + json_string(typ)  # (one type: written as a string)
    if items is not None:
        if type(items) is not dict:
            return None
        for k, v in items.items():
            if type(k) is not str or type(v) is not str:
                return None
        text += ',"items":' + json_text(items)  # (strings only: what plain_data keeps)
    if description is not None:
        if type(description) is not str:
            return None
        if description:
            text += ',"description":' + json_string(description)
    enum_text = _strings_text(',"enum":', enum)
    return None if enum_text is None else text + enum_text + "}"


def _strings_text(key: str, value: Any) -> str | None:
    """``key`` and the JSON array of a list of strings ("" for None or an empty list: a nil
    or empty slice, omitted); None for anything else."""
    if value is None:
        return ""
    if type(value) is not list:
        return None
    for v in value:
        if type(v) is not str:
            return None
    return key + "[" + ",".join(map(json_string, value)) + "]" if value else ""


def _tool_call(raw: Any) -> Any:
    if raw is None:
        raw = {}  # (a JSON null in the list: Go's zero ToolCall)
    if not isinstance(raw, dict):
        _refused(raw, "Message.tool_calls of type api.ToolCall")
    fn = _object(raw.get("function"), "ToolCall.function of type api.ToolCallFunction")
    args = fn.get("arguments")
    if args is None:
        arguments = TemplateArgs()
        arguments.nil = True
    elif isinstance(args, dict):
        plain = gotmpl.plain_data
        arguments = TemplateArgs(
            {str(k): v if type(v) is str else plain(v) for k, v in args.items()}
        )
    else:
        raise RequestError("json: cannot unmarshal arguments into an ordered map")
    index = fn.get("index")
    call = _new(TemplateToolCall)
    call.ID = _str(raw.get("id"), "ToolCall.id")
    call.Function = function = _new(TemplateToolCallFunction)
    function.Index = 0 if index is None else _go_int(index, "ToolCallFunction.index")
    function.Name = _str(fn.get("name"), "name")
    function.Arguments = arguments
    return call


def _go_int(value: Any, where: str) -> int:
    """A JSON number Go binds to an ``int``: an integer within 64 bits. A number written with
    a fraction or an exponent (a Python float: ``json`` reads ``2.0`` so) or out of range is
    Go's binding error, as any other kind is."""
    if isinstance(value, int) and not isinstance(value, bool):
        if -(1 << 63) <= value < 1 << 63:
            return int(value)
        try:
            digits = str(int(value))
        except ValueError:  # past Python's digit limit for int -> str (a Python caller's int)
            digits = f"of {value.bit_length():,} bits"
        raise RequestError(f"json: cannot unmarshal number {digits} into Go struct field {where} of type int")
    if isinstance(value, float):
        raise RequestError(f"json: cannot unmarshal number {value!r} into Go struct field {where} of type int")
    return _refused(value, f"{where} of type int")


def _array(value: Any, field: str) -> Any:
    """A JSON array field of a message; any other kind is Go's binding error."""
    if isinstance(value, (list, tuple)):
        return value
    return _refused(value, f"Message.{field}")


def _message(raw: Any) -> Any:
    """A request message shaped (collate shapes the usual one itself)."""
    if raw is None:
        raw = {}  # (a JSON null in the list: Go's zero Message)
    if not isinstance(raw, dict):
        raise RequestError("json: cannot unmarshal into Go value of type api.Message")
    get = raw.get
    role, content, thinking = get("role"), get("content"), get("thinking")
    images, calls = get("images"), get("tool_calls")
    name, call_id = get("tool_name"), get("tool_call_id")
    # Fields are checked in the order Go's JSON binding reports them; plain strings and absent
    # lists take the short paths.
    m = _new_message(TemplateMessage)
    # (an absent role is "", lower-cased already)
    m.Role = (
        (_ROLES.get(role) or to_lower(role)) if type(role) is str else _str(role, "Message.role")
    )
    m.Content = content if type(content) is str else _str(content, "Message.content")
    m.Thinking = thinking if type(thinking) is str else _str(thinking, "Message.thinking")
    m.Images = _slice([decode_image(i) for i in _array(images, "images")], "[]main.ImageData") if images else _NIL_IMAGES
    m.ToolCalls = (
        _slice([_tool_call(c) for c in _array(calls, "tool_calls")], "[]main.templateToolCall")
        if calls
        else _NIL_TOOL_CALLS
    )
    m.ToolName = name if type(name) is str else _str(name, "Message.tool_name")
    m.ToolCallID = call_id if type(call_id) is str else _str(call_id, "Message.tool_call_id")
    return m


_new_message = object.__new__
_ROLES = {r: r for r in ("system", "user", "assistant", "tool")}  # strings.ToLower of each
_NIL_IMAGES = _slice((), "[]main.ImageData", nil=True)
_NIL_TOOL_CALLS = _slice((), "[]main.templateToolCall", nil=True)


def decode_image(raw: Any) -> Any:
    """An image of the request: bytes as they are, a base64 string decoded as Go's
    ``encoding/base64`` decodes it (line breaks skipped), else ``RequestError``."""
    if isinstance(raw, (bytes, bytearray)):
        return ImageData(raw)
    if raw is None:  # a JSON null in the list: Go's nil []byte
        return _NIL_IMAGE
    if isinstance(raw, str) and ("\n" in raw or "\r" in raw):
        raw = raw.replace("\r", "").replace("\n", "")  # Go's base64 decoder skips line breaks
    try:
        return ImageData(base64.b64decode(raw, validate=True))
    except (ValueError, TypeError):
        raise RequestError("illegal base64 data in image") from None


def _think(think: Any) -> tuple[bool, str, bool]:
    """server/prompt.go: api.ThinkValue -> (Think, ThinkLevel, IsThinkSet)."""
    if think is None:
        return False, "", False
    if isinstance(think, bool):
        return think, "medium" if think else "", True
    if isinstance(think, str):
        if think not in ("high", "medium", "low"):
            raise RequestError(
                f'invalid think value: "{think}" (must be "high", "medium", "low", true, or false)'
            )
        return True, think, True
    raise RequestError(
        'think must be a boolean or string ("high", "medium", "low", true, or false)'
    )


def collate(messages: list) -> tuple[str, list]:
    """Each request message shaped (``_message``; the usual one here), then template.collate: consecutive
    messages of one role (not tool) merged; all system text."""
    system: list[str] = []
    collated: list = []
    collate_onto(collated, system, messages)
    return "\n\n".join(system), collated


def collate_onto(collated: list, system: list, messages: list) -> None:
    """:func:`collate` continued (an incremental session's append): ``messages`` shaped and
    collated onto ``collated`` in place (the first may merge into its last message, whose
    ``Content`` then grows), their system contents appended to ``system``."""
    last = collated[-1] if collated else None
    run = None  # the contents of a run of one role merged into ``last``, joined as it ends
    for raw in messages:
        role = content = None
        if type(raw) is dict and len(raw) == 2:
            role, content = raw.get("role"), raw.get("content")
        if type(role) is str and type(content) is str:
            # the usual message (string role and content only), shaped here: one object,
            # the shared nil slices
            msg = _new_message(TemplateMessage)
            msg.Role = role = _ROLES.get(role) or to_lower(role)
            msg.Content = content
            msg.Thinking = msg.ToolName = msg.ToolCallID = ""
            msg.Images = _NIL_IMAGES
            msg.ToolCalls = _NIL_TOOL_CALLS
        else:
            msg = _message(raw)
            role = msg.Role
        if role == "system":
            system.append(msg.Content)
        if last is not None and last.Role == role and role != "tool":
            if run is None:
                run = [last.Content]
            run.append(msg.Content)  # (a ``+=`` a message copied the run so far: quadratic)
        else:
            if run is not None:
                last.Content, run = "\n\n".join(run), None
            collated.append(msg)
            last = msg
    if run is not None:
        last.Content = "\n\n".join(run)


def messages_value(collated: list) -> Any:
    """The template's ``.Messages`` for collated messages (nil when there are none)."""
    return _Messages(collated) if collated else _NIL_MESSAGES


class _Messages(GoSlice):
    """The template's .Messages ([]*templateMessage)."""

    go_type = "[]*main.templateMessage"


_NIL_MESSAGES = _slice((), _Messages.go_type, nil=True, cls=_Messages)
_NIL_TOOLS = _slice((), TemplateTools.go_type, nil=True, cls=TemplateTools)


# ----------------------------------------------------------------------------- execution


class CutRun:
    """The data of the legacy mode's last turn: the compiled template runs its cut tree."""

    __slots__ = ("data",)

    def __init__(self, data: dict) -> None:
        self.data = data


def is_cut_run(context: Any) -> bool:
    return type(context) is CutRun


def cut_data(context: Any) -> Any:
    return context.data


def template_values(
    messages: Any, tools: Any = None, think: Any = None, json_tools: bool = False
) -> dict:
    """The data of the messages mode (Template.Execute's map). ``json_tools``: the template
    only marshals its tools (the compiler's ``GO_TOOLS_JSON``), so they may be JsonTools."""
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise RequestError(
            "json: cannot unmarshal messages into Go struct field of type []api.Message"
        )
    system, collated = collate(messages)
    if think is None:
        think_value, level, is_set = False, "", False
    else:
        think_value, level, is_set = _think(think)
    if tools is None:
        view_tools = _NIL_TOOLS
    elif isinstance(tools, list):
        view_tools = TemplateTools([(json_tool if json_tools else _tool)(t) for t in tools])
    else:
        raise RequestError("json: cannot unmarshal tools into Go struct field of type api.Tools")
    return {
        "System": system,
        "Messages": messages_value(collated),
        "Tools": view_tools,
        "Response": "",
        "Think": think_value,
        "ThinkLevel": level,
        "IsThinkSet": is_set,
    }


def render_conversation(
    namespace: Any,
    messages: Any,
    tools: Any = None,
    think: Any = None,
    now: Any = None,
    **_ignored: Any,
) -> str:
    """Ollama's Template.Execute for /api/chat input; ``namespace`` is the compiled module's
    (its ``render`` and ``GO_MODE`` / ``GO_CUT_ERROR`` / ``GO_TOOLS_JSON`` metadata). ``now`` freezes
    currentDate; other request keys (model, options, ...) are ignored as Ollama ignores them."""
    render = namespace["render"]
    saved = gotmpl._NOW
    if now is not None:
        gotmpl.set_now(now)
    try:
        if namespace.get("GO_MODE", "messages") == "messages":
            json_tools = bool(namespace.get("GO_TOOLS_JSON"))
            return render(template_values(messages, tools, think, json_tools))
        return _legacy(namespace, render, template_values(messages, tools, think))
    finally:
        gotmpl._NOW = saved


def think_values(think: Any) -> tuple[bool, str, bool]:
    """A request's ``think`` -> (Think, ThinkLevel, IsThinkSet), as the handlers fill them."""
    if think is None:
        return False, "", False
    return _think(think)


def render_data(namespace: Any, data: Any, now: Any = None) -> str:
    """One Template.Execute of the compiled module on already-shaped ``data`` (the
    fill-in-middle values), the clock frozen at ``now`` when given."""
    if now is None:
        return namespace["render"](data)
    saved = gotmpl._NOW
    gotmpl.set_now(now)
    try:
        return namespace["render"](data)
    finally:
        gotmpl._NOW = saved


def conversation_entry(namespace: Any) -> Any:
    """``render_conversation`` for one compiled module (its ``namespace``), its mode chosen
    once: the messages mode renders the values directly (with ``now``, the general way)."""
    render = namespace["render"]
    if namespace.get("GO_MODE", "messages") != "messages":
        return functools.partial(render_conversation, namespace)
    json_tools = bool(namespace.get("GO_TOOLS_JSON"))

    def render_messages(
        messages: Any, tools: Any = None, think: Any = None, now: Any = None, **_ignored: Any
    ) -> str:
        if now is not None:  # the clock frozen for this render: the general way
            return render_conversation(namespace, messages, tools, think, now)
        return render(template_values(messages, tools, think, json_tools))

    return render_messages


def _legacy(namespace: Any, render: Any, values: dict) -> str:
    """The per-turn Prompt/Response mode (Template.Execute without messages)."""
    cut_error = namespace.get("GO_CUT_ERROR")
    if cut_error:
        raise gotmpl.ExecError(f"panic: {cut_error}")
    common = {k: values[k] for k in ("Think", "ThinkLevel", "IsThinkSet")}
    turns, last, _ = legacy_turns(values["Messages"], common)
    out = [render(turn) for turn in turns]
    out.append(render(CutRun(last)))
    return "".join(out)


def legacy_turns(messages: Any, common: dict) -> tuple[list, dict, int]:
    """The legacy mode's turns of collated ``messages``: (the finished turns' data, the last
    turn's data, the index of the message the last turn starts at). A turn is finished by
    the user message after a response or the system message after a prompt or response, and
    starts empty there: the turns before never change as messages are added (an incremental
    session renders each finished turn once and the last one again from that index)."""
    turns: list[dict] = []
    system = prompt = response = ""
    start = 0
    for k, msg in enumerate(messages):
        role = msg.Role
        if role == "system":
            if prompt or response:
                turns.append({"System": system, "Prompt": prompt, "Response": response, **common})
                system = prompt = response = ""
                start = k
            system = msg.Content
        elif role == "user":
            if response:
                turns.append({"System": system, "Prompt": prompt, "Response": response, **common})
                system = prompt = response = ""
                start = k
            prompt = msg.Content
        elif role == "assistant":
            response = msg.Content
    return turns, {"System": system, "Prompt": prompt, "Response": response, **common}, start
