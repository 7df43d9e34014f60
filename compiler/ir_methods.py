"""The IR classes' methods (``ir.methods_source``); long because it is generated,
ahead of time, so that Python's bytecode cache keeps it compiled. Do not edit; regenerate with
``TMPL2PY_UPDATE_TABLES=1 pytest tests/unit/test_ir_methods.py``."""
# fmt: off
# flake8: noqa

METHODS_SHA256 = '931065085880cf6489cc1760ef0c2ca7aaaf17ce25b082d64875c13e4ef71059'


_KEEP = object()
def init0(self, value, span=(0, 0)):
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq0(self, other):
    if other.__class__ is self.__class__:
        return (self.value, ) == (other.value, )
    return NotImplemented
def hash0(self):
    return hash((self.value, ))
def repr0(self):
    return f'{self.__class__.__qualname__}(value={self.value!r})'
def replace0(self, value=_KEEP, span=_KEEP):
    return C0(self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper0(node, fn):
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_value is o_value:
        return node
    return C0(value=n_value, span=node.span)
def init1(self, name, ident='', span=(0, 0), kind=''):
    _set(self, 'name', name)
    _set(self, 'ident', ident)
    _set(self, 'span', span)
    _set(self, 'kind', kind)
def eq1(self, other):
    if other.__class__ is self.__class__:
        return (self.name, self.ident, self.kind, ) == (other.name, other.ident, other.kind, )
    return NotImplemented
def hash1(self):
    return hash((self.name, self.ident, self.kind, ))
def repr1(self):
    return f'{self.__class__.__qualname__}(name={self.name!r}, ident={self.ident!r}, kind={self.kind!r})'
def replace1(self, name=_KEEP, ident=_KEEP, span=_KEEP, kind=_KEEP):
    return C1(self.name if name is _KEEP else name, self.ident if ident is _KEEP else ident, self.span if span is _KEEP else span, self.kind if kind is _KEEP else kind)
def mapper1(node, fn):
    if True:
        return node
    return C1(name=node.name, ident=node.ident, span=node.span, kind=node.kind)
def init2(self, ident, span=(0, 0)):
    _set(self, 'ident', ident)
    _set(self, 'span', span)
def eq2(self, other):
    if other.__class__ is self.__class__:
        return (self.ident, ) == (other.ident, )
    return NotImplemented
def hash2(self):
    return hash((self.ident, ))
def repr2(self):
    return f'{self.__class__.__qualname__}(ident={self.ident!r})'
def replace2(self, ident=_KEEP, span=_KEEP):
    return C2(self.ident if ident is _KEEP else ident, self.span if span is _KEEP else span)
def mapper2(node, fn):
    if True:
        return node
    return C2(ident=node.ident, span=node.span)
def init3(self, value, span=(0, 0)):
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq3(self, other):
    if other.__class__ is self.__class__:
        return (self.value, ) == (other.value, )
    return NotImplemented
def hash3(self):
    return hash((self.value, ))
def repr3(self):
    return f'{self.__class__.__qualname__}(value={self.value!r})'
def replace3(self, value=_KEEP, span=_KEEP):
    return C3(self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper3(node, fn):
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_value is o_value:
        return node
    return C3(value=n_value, span=node.span)
def init4(self, name, args=(), kwargs=(), span=(0, 0)):
    _set(self, 'name', name)
    _set(self, 'args', args)
    _set(self, 'kwargs', kwargs)
    _set(self, 'span', span)
def eq4(self, other):
    if other.__class__ is self.__class__:
        return (self.name, self.args, self.kwargs, ) == (other.name, other.args, other.kwargs, )
    return NotImplemented
def hash4(self):
    return hash((self.name, self.args, self.kwargs, ))
def repr4(self):
    return f'{self.__class__.__qualname__}(name={self.name!r}, args={self.args!r}, kwargs={self.kwargs!r})'
def replace4(self, name=_KEEP, args=_KEEP, kwargs=_KEEP, span=_KEEP):
    return C4(self.name if name is _KEEP else name, self.args if args is _KEEP else args, self.kwargs if kwargs is _KEEP else kwargs, self.span if span is _KEEP else span)
def mapper4(node, fn):
    o_args = node.args
    n_args = fn(o_args) if isinstance(o_args, KINDS) else o_args
    o_kwargs = node.kwargs
    n_kwargs = fn(o_kwargs) if isinstance(o_kwargs, KINDS) else o_kwargs
    if n_args is o_args and n_kwargs is o_kwargs:
        return node
    return C4(name=node.name, args=n_args, kwargs=n_kwargs, span=node.span)
def init5(self, name, span=(0, 0)):
    _set(self, 'name', name)
    _set(self, 'span', span)
def eq5(self, other):
    if other.__class__ is self.__class__:
        return (self.name, ) == (other.name, )
    return NotImplemented
def hash5(self):
    return hash((self.name, ))
def repr5(self):
    return f'{self.__class__.__qualname__}(name={self.name!r})'
def replace5(self, name=_KEEP, span=_KEEP):
    return C5(self.name if name is _KEEP else name, self.span if span is _KEEP else span)
def mapper5(node, fn):
    if True:
        return node
    return C5(name=node.name, span=node.span)
def init6(self, value, span=(0, 0)):
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq6(self, other):
    if other.__class__ is self.__class__:
        return (self.value, ) == (other.value, )
    return NotImplemented
def hash6(self):
    return hash((self.value, ))
def repr6(self):
    return f'{self.__class__.__qualname__}(value={self.value!r})'
def replace6(self, value=_KEEP, span=_KEEP):
    return C6(self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper6(node, fn):
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_value is o_value:
        return node
    return C6(value=n_value, span=node.span)
def init7(self, name, span=(0, 0)):
    _set(self, 'name', name)
    _set(self, 'span', span)
def eq7(self, other):
    if other.__class__ is self.__class__:
        return (self.name, ) == (other.name, )
    return NotImplemented
def hash7(self):
    return hash((self.name, ))
def repr7(self):
    return f'{self.__class__.__qualname__}(name={self.name!r})'
def replace7(self, name=_KEEP, span=_KEEP):
    return C7(self.name if name is _KEEP else name, self.span if span is _KEEP else span)
def mapper7(node, fn):
    if True:
        return node
    return C7(name=node.name, span=node.span)
def init8(self, op, left, right, span=(0, 0)):
    _set(self, 'op', op)
    _set(self, 'left', left)
    _set(self, 'right', right)
    _set(self, 'span', span)
def eq8(self, other):
    if other.__class__ is self.__class__:
        return (self.op, self.left, self.right, ) == (other.op, other.left, other.right, )
    return NotImplemented
def hash8(self):
    return hash((self.op, self.left, self.right, ))
def repr8(self):
    return f'{self.__class__.__qualname__}(op={self.op!r}, left={self.left!r}, right={self.right!r})'
def replace8(self, op=_KEEP, left=_KEEP, right=_KEEP, span=_KEEP):
    return C8(self.op if op is _KEEP else op, self.left if left is _KEEP else left, self.right if right is _KEEP else right, self.span if span is _KEEP else span)
def mapper8(node, fn):
    o_left = node.left
    n_left = fn(o_left) if isinstance(o_left, KINDS) else o_left
    o_right = node.right
    n_right = fn(o_right) if isinstance(o_right, KINDS) else o_right
    if n_left is o_left and n_right is o_right:
        return node
    return C8(op=node.op, left=n_left, right=n_right, span=node.span)
def init9(self, op, operand, span=(0, 0)):
    _set(self, 'op', op)
    _set(self, 'operand', operand)
    _set(self, 'span', span)
def eq9(self, other):
    if other.__class__ is self.__class__:
        return (self.op, self.operand, ) == (other.op, other.operand, )
    return NotImplemented
def hash9(self):
    return hash((self.op, self.operand, ))
def repr9(self):
    return f'{self.__class__.__qualname__}(op={self.op!r}, operand={self.operand!r})'
def replace9(self, op=_KEEP, operand=_KEEP, span=_KEEP):
    return C9(self.op if op is _KEEP else op, self.operand if operand is _KEEP else operand, self.span if span is _KEEP else span)
def mapper9(node, fn):
    o_operand = node.operand
    n_operand = fn(o_operand) if isinstance(o_operand, KINDS) else o_operand
    if n_operand is o_operand:
        return node
    return C9(op=node.op, operand=n_operand, span=node.span)
def init10(self, left, ops, span=(0, 0)):
    _set(self, 'left', left)
    _set(self, 'ops', ops)
    _set(self, 'span', span)
def eq10(self, other):
    if other.__class__ is self.__class__:
        return (self.left, self.ops, ) == (other.left, other.ops, )
    return NotImplemented
def hash10(self):
    return hash((self.left, self.ops, ))
def repr10(self):
    return f'{self.__class__.__qualname__}(left={self.left!r}, ops={self.ops!r})'
def replace10(self, left=_KEEP, ops=_KEEP, span=_KEEP):
    return C10(self.left if left is _KEEP else left, self.ops if ops is _KEEP else ops, self.span if span is _KEEP else span)
def mapper10(node, fn):
    o_left = node.left
    n_left = fn(o_left) if isinstance(o_left, KINDS) else o_left
    o_ops = node.ops
    n_ops = fn(o_ops) if isinstance(o_ops, KINDS) else o_ops
    if n_left is o_left and n_ops is o_ops:
        return node
    return C10(left=n_left, ops=n_ops, span=node.span)
def init11(self, op, values, span=(0, 0)):
    _set(self, 'op', op)
    _set(self, 'values', values)
    _set(self, 'span', span)
def eq11(self, other):
    if other.__class__ is self.__class__:
        return (self.op, self.values, ) == (other.op, other.values, )
    return NotImplemented
def hash11(self):
    return hash((self.op, self.values, ))
def repr11(self):
    return f'{self.__class__.__qualname__}(op={self.op!r}, values={self.values!r})'
def replace11(self, op=_KEEP, values=_KEEP, span=_KEEP):
    return C11(self.op if op is _KEEP else op, self.values if values is _KEEP else values, self.span if span is _KEEP else span)
def mapper11(node, fn):
    o_values = node.values
    n_values = fn(o_values) if isinstance(o_values, KINDS) else o_values
    if n_values is o_values:
        return node
    return C11(op=node.op, values=n_values, span=node.span)
def init12(self, operand, span=(0, 0)):
    _set(self, 'operand', operand)
    _set(self, 'span', span)
def eq12(self, other):
    if other.__class__ is self.__class__:
        return (self.operand, ) == (other.operand, )
    return NotImplemented
def hash12(self):
    return hash((self.operand, ))
def repr12(self):
    return f'{self.__class__.__qualname__}(operand={self.operand!r})'
def replace12(self, operand=_KEEP, span=_KEEP):
    return C12(self.operand if operand is _KEEP else operand, self.span if span is _KEEP else span)
def mapper12(node, fn):
    o_operand = node.operand
    n_operand = fn(o_operand) if isinstance(o_operand, KINDS) else o_operand
    if n_operand is o_operand:
        return node
    return C12(operand=n_operand, span=node.span)
def init13(self, test, body, orelse, span=(0, 0)):
    _set(self, 'test', test)
    _set(self, 'body', body)
    _set(self, 'orelse', orelse)
    _set(self, 'span', span)
def eq13(self, other):
    if other.__class__ is self.__class__:
        return (self.test, self.body, self.orelse, ) == (other.test, other.body, other.orelse, )
    return NotImplemented
def hash13(self):
    return hash((self.test, self.body, self.orelse, ))
def repr13(self):
    return f'{self.__class__.__qualname__}(test={self.test!r}, body={self.body!r}, orelse={self.orelse!r})'
def replace13(self, test=_KEEP, body=_KEEP, orelse=_KEEP, span=_KEEP):
    return C13(self.test if test is _KEEP else test, self.body if body is _KEEP else body, self.orelse if orelse is _KEEP else orelse, self.span if span is _KEEP else span)
def mapper13(node, fn):
    o_test = node.test
    n_test = fn(o_test) if isinstance(o_test, KINDS) else o_test
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_orelse = node.orelse
    n_orelse = fn(o_orelse) if isinstance(o_orelse, KINDS) else o_orelse
    if n_test is o_test and n_body is o_body and n_orelse is o_orelse:
        return node
    return C13(test=n_test, body=n_body, orelse=n_orelse, span=node.span)
def init14(self, items, span=(0, 0)):
    _set(self, 'items', items)
    _set(self, 'span', span)
def eq14(self, other):
    if other.__class__ is self.__class__:
        return (self.items, ) == (other.items, )
    return NotImplemented
def hash14(self):
    return hash((self.items, ))
def repr14(self):
    return f'{self.__class__.__qualname__}(items={self.items!r})'
def replace14(self, items=_KEEP, span=_KEEP):
    return C14(self.items if items is _KEEP else items, self.span if span is _KEEP else span)
def mapper14(node, fn):
    o_items = node.items
    n_items = fn(o_items) if isinstance(o_items, KINDS) else o_items
    if n_items is o_items:
        return node
    return C14(items=n_items, span=node.span)
def init15(self, items, span=(0, 0)):
    _set(self, 'items', items)
    _set(self, 'span', span)
def eq15(self, other):
    if other.__class__ is self.__class__:
        return (self.items, ) == (other.items, )
    return NotImplemented
def hash15(self):
    return hash((self.items, ))
def repr15(self):
    return f'{self.__class__.__qualname__}(items={self.items!r})'
def replace15(self, items=_KEEP, span=_KEEP):
    return C15(self.items if items is _KEEP else items, self.span if span is _KEEP else span)
def mapper15(node, fn):
    o_items = node.items
    n_items = fn(o_items) if isinstance(o_items, KINDS) else o_items
    if n_items is o_items:
        return node
    return C15(items=n_items, span=node.span)
def init16(self, items, span=(0, 0)):
    _set(self, 'items', items)
    _set(self, 'span', span)
def eq16(self, other):
    if other.__class__ is self.__class__:
        return (self.items, ) == (other.items, )
    return NotImplemented
def hash16(self):
    return hash((self.items, ))
def repr16(self):
    return f'{self.__class__.__qualname__}(items={self.items!r})'
def replace16(self, items=_KEEP, span=_KEEP):
    return C16(self.items if items is _KEEP else items, self.span if span is _KEEP else span)
def mapper16(node, fn):
    o_items = node.items
    n_items = fn(o_items) if isinstance(o_items, KINDS) else o_items
    if n_items is o_items:
        return node
    return C16(items=n_items, span=node.span)
def init17(self, func, args=(), kwargs=(), span=(0, 0)):
    _set(self, 'func', func)
    _set(self, 'args', args)
    _set(self, 'kwargs', kwargs)
    _set(self, 'span', span)
def eq17(self, other):
    if other.__class__ is self.__class__:
        return (self.func, self.args, self.kwargs, ) == (other.func, other.args, other.kwargs, )
    return NotImplemented
def hash17(self):
    return hash((self.func, self.args, self.kwargs, ))
def repr17(self):
    return f'{self.__class__.__qualname__}(func={self.func!r}, args={self.args!r}, kwargs={self.kwargs!r})'
def replace17(self, func=_KEEP, args=_KEEP, kwargs=_KEEP, span=_KEEP):
    return C17(self.func if func is _KEEP else func, self.args if args is _KEEP else args, self.kwargs if kwargs is _KEEP else kwargs, self.span if span is _KEEP else span)
def mapper17(node, fn):
    o_func = node.func
    n_func = fn(o_func) if isinstance(o_func, KINDS) else o_func
    o_args = node.args
    n_args = fn(o_args) if isinstance(o_args, KINDS) else o_args
    o_kwargs = node.kwargs
    n_kwargs = fn(o_kwargs) if isinstance(o_kwargs, KINDS) else o_kwargs
    if n_func is o_func and n_args is o_args and n_kwargs is o_kwargs:
        return node
    return C17(func=n_func, args=n_args, kwargs=n_kwargs, span=node.span)
def init18(self, ident, args=(), span=(0, 0)):
    _set(self, 'ident', ident)
    _set(self, 'args', args)
    _set(self, 'span', span)
def eq18(self, other):
    if other.__class__ is self.__class__:
        return (self.ident, self.args, ) == (other.ident, other.args, )
    return NotImplemented
def hash18(self):
    return hash((self.ident, self.args, ))
def repr18(self):
    return f'{self.__class__.__qualname__}(ident={self.ident!r}, args={self.args!r})'
def replace18(self, ident=_KEEP, args=_KEEP, span=_KEEP):
    return C18(self.ident if ident is _KEEP else ident, self.args if args is _KEEP else args, self.span if span is _KEEP else span)
def mapper18(node, fn):
    o_args = node.args
    n_args = fn(o_args) if isinstance(o_args, KINDS) else o_args
    if n_args is o_args:
        return node
    return C18(ident=node.ident, args=n_args, span=node.span)
def init19(self, obj, key, mode, fallback, span=(0, 0), cache='', flag='', sets_flag=0, again=False, bind=None):
    _set(self, 'obj', obj)
    _set(self, 'key', key)
    _set(self, 'mode', mode)
    _set(self, 'fallback', fallback)
    _set(self, 'span', span)
    _set(self, 'cache', cache)
    _set(self, 'flag', flag)
    _set(self, 'sets_flag', sets_flag)
    _set(self, 'again', again)
    _set(self, 'bind', bind)
def eq19(self, other):
    if other.__class__ is self.__class__:
        return (self.obj, self.key, self.mode, self.fallback, self.cache, self.flag, self.sets_flag, self.again, self.bind, ) == (other.obj, other.key, other.mode, other.fallback, other.cache, other.flag, other.sets_flag, other.again, other.bind, )
    return NotImplemented
def hash19(self):
    return hash((self.obj, self.key, self.mode, self.fallback, self.cache, self.flag, self.sets_flag, self.again, self.bind, ))
def repr19(self):
    return f'{self.__class__.__qualname__}(obj={self.obj!r}, key={self.key!r}, mode={self.mode!r}, fallback={self.fallback!r}, cache={self.cache!r}, flag={self.flag!r}, sets_flag={self.sets_flag!r}, again={self.again!r}, bind={self.bind!r})'
def replace19(self, obj=_KEEP, key=_KEEP, mode=_KEEP, fallback=_KEEP, span=_KEEP, cache=_KEEP, flag=_KEEP, sets_flag=_KEEP, again=_KEEP, bind=_KEEP):
    return C19(self.obj if obj is _KEEP else obj, self.key if key is _KEEP else key, self.mode if mode is _KEEP else mode, self.fallback if fallback is _KEEP else fallback, self.span if span is _KEEP else span, self.cache if cache is _KEEP else cache, self.flag if flag is _KEEP else flag, self.sets_flag if sets_flag is _KEEP else sets_flag, self.again if again is _KEEP else again, self.bind if bind is _KEEP else bind)
def mapper19(node, fn):
    o_obj = node.obj
    n_obj = fn(o_obj) if isinstance(o_obj, KINDS) else o_obj
    o_key = node.key
    n_key = fn(o_key) if isinstance(o_key, KINDS) else o_key
    o_fallback = node.fallback
    n_fallback = fn(o_fallback) if isinstance(o_fallback, KINDS) else o_fallback
    o_bind = node.bind
    n_bind = fn(o_bind) if isinstance(o_bind, KINDS) else o_bind
    if n_obj is o_obj and n_key is o_key and n_fallback is o_fallback and n_bind is o_bind:
        return node
    return C19(obj=n_obj, key=n_key, mode=node.mode, fallback=n_fallback, span=node.span, cache=node.cache, flag=node.flag, sets_flag=node.sets_flag, again=node.again, bind=n_bind)
def init20(self, loop, attr, span=(0, 0)):
    _set(self, 'loop', loop)
    _set(self, 'attr', attr)
    _set(self, 'span', span)
def eq20(self, other):
    if other.__class__ is self.__class__:
        return (self.loop, self.attr, ) == (other.loop, other.attr, )
    return NotImplemented
def hash20(self):
    return hash((self.loop, self.attr, ))
def repr20(self):
    return f'{self.__class__.__qualname__}(loop={self.loop!r}, attr={self.attr!r})'
def replace20(self, loop=_KEEP, attr=_KEEP, span=_KEEP):
    return C20(self.loop if loop is _KEEP else loop, self.attr if attr is _KEEP else attr, self.span if span is _KEEP else span)
def mapper20(node, fn):
    o_loop = node.loop
    n_loop = fn(o_loop) if isinstance(o_loop, KINDS) else o_loop
    if n_loop is o_loop:
        return node
    return C20(loop=n_loop, attr=node.attr, span=node.span)
def init21(self, temp, value, span=(0, 0)):
    _set(self, 'temp', temp)
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq21(self, other):
    if other.__class__ is self.__class__:
        return (self.temp, self.value, ) == (other.temp, other.value, )
    return NotImplemented
def hash21(self):
    return hash((self.temp, self.value, ))
def repr21(self):
    return f'{self.__class__.__qualname__}(temp={self.temp!r}, value={self.value!r})'
def replace21(self, temp=_KEEP, value=_KEEP, span=_KEEP):
    return C21(self.temp if temp is _KEEP else temp, self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper21(node, fn):
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_value is o_value:
        return node
    return C21(temp=node.temp, value=n_value, span=node.span)
def init22(self, parts, span=(0, 0)):
    _set(self, 'parts', parts)
    _set(self, 'span', span)
def eq22(self, other):
    if other.__class__ is self.__class__:
        return (self.parts, ) == (other.parts, )
    return NotImplemented
def hash22(self):
    return hash((self.parts, ))
def repr22(self):
    return f'{self.__class__.__qualname__}(parts={self.parts!r})'
def replace22(self, parts=_KEEP, span=_KEEP):
    return C22(self.parts if parts is _KEEP else parts, self.span if span is _KEEP else span)
def mapper22(node, fn):
    o_parts = node.parts
    n_parts = fn(o_parts) if isinstance(o_parts, KINDS) else o_parts
    if n_parts is o_parts:
        return node
    return C22(parts=n_parts, span=node.span)
def init23(self, body, span=(0, 0)):
    _set(self, 'body', body)
    _set(self, 'span', span)
def eq23(self, other):
    if other.__class__ is self.__class__:
        return (self.body, ) == (other.body, )
    return NotImplemented
def hash23(self):
    return hash((self.body, ))
def repr23(self):
    return f'{self.__class__.__qualname__}(body={self.body!r})'
def replace23(self, body=_KEEP, span=_KEEP):
    return C23(self.body if body is _KEEP else body, self.span if span is _KEEP else span)
def mapper23(node, fn):
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    if n_body is o_body:
        return node
    return C23(body=n_body, span=node.span)
def init24(self, text, span=(0, 0)):
    _set(self, 'text', text)
    _set(self, 'span', span)
def eq24(self, other):
    if other.__class__ is self.__class__:
        return (self.text, ) == (other.text, )
    return NotImplemented
def hash24(self):
    return hash((self.text, ))
def repr24(self):
    return f'{self.__class__.__qualname__}(text={self.text!r})'
def replace24(self, text=_KEEP, span=_KEEP):
    return C24(self.text if text is _KEEP else text, self.span if span is _KEEP else span)
def mapper24(node, fn):
    if True:
        return node
    return C24(text=node.text, span=node.span)
def init25(self, expr, span=(0, 0)):
    _set(self, 'expr', expr)
    _set(self, 'span', span)
def eq25(self, other):
    if other.__class__ is self.__class__:
        return (self.expr, ) == (other.expr, )
    return NotImplemented
def hash25(self):
    return hash((self.expr, ))
def repr25(self):
    return f'{self.__class__.__qualname__}(expr={self.expr!r})'
def replace25(self, expr=_KEEP, span=_KEEP):
    return C25(self.expr if expr is _KEEP else expr, self.span if span is _KEEP else span)
def mapper25(node, fn):
    o_expr = node.expr
    n_expr = fn(o_expr) if isinstance(o_expr, KINDS) else o_expr
    if n_expr is o_expr:
        return node
    return C25(expr=n_expr, span=node.span)
def init26(self, test, body, orelse=(), span=(0, 0)):
    _set(self, 'test', test)
    _set(self, 'body', body)
    _set(self, 'orelse', orelse)
    _set(self, 'span', span)
def eq26(self, other):
    if other.__class__ is self.__class__:
        return (self.test, self.body, self.orelse, ) == (other.test, other.body, other.orelse, )
    return NotImplemented
def hash26(self):
    return hash((self.test, self.body, self.orelse, ))
def repr26(self):
    return f'{self.__class__.__qualname__}(test={self.test!r}, body={self.body!r}, orelse={self.orelse!r})'
def replace26(self, test=_KEEP, body=_KEEP, orelse=_KEEP, span=_KEEP):
    return C26(self.test if test is _KEEP else test, self.body if body is _KEEP else body, self.orelse if orelse is _KEEP else orelse, self.span if span is _KEEP else span)
def mapper26(node, fn):
    o_test = node.test
    n_test = fn(o_test) if isinstance(o_test, KINDS) else o_test
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_orelse = node.orelse
    n_orelse = fn(o_orelse) if isinstance(o_orelse, KINDS) else o_orelse
    if n_test is o_test and n_body is o_body and n_orelse is o_orelse:
        return node
    return C26(test=n_test, body=n_body, orelse=n_orelse, span=node.span)
def init27(self, names, span=(0, 0)):
    _set(self, 'names', names)
    _set(self, 'span', span)
def eq27(self, other):
    if other.__class__ is self.__class__:
        return (self.names, ) == (other.names, )
    return NotImplemented
def hash27(self):
    return hash((self.names, ))
def repr27(self):
    return f'{self.__class__.__qualname__}(names={self.names!r})'
def replace27(self, names=_KEEP, span=_KEEP):
    return C27(self.names if names is _KEEP else names, self.span if span is _KEEP else span)
def mapper27(node, fn):
    o_names = node.names
    n_names = fn(o_names) if isinstance(o_names, KINDS) else o_names
    if n_names is o_names:
        return node
    return C27(names=n_names, span=node.span)
def init28(self, target, value, span=(0, 0)):
    _set(self, 'target', target)
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq28(self, other):
    if other.__class__ is self.__class__:
        return (self.target, self.value, ) == (other.target, other.value, )
    return NotImplemented
def hash28(self):
    return hash((self.target, self.value, ))
def repr28(self):
    return f'{self.__class__.__qualname__}(target={self.target!r}, value={self.value!r})'
def replace28(self, target=_KEEP, value=_KEEP, span=_KEEP):
    return C28(self.target if target is _KEEP else target, self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper28(node, fn):
    o_target = node.target
    n_target = fn(o_target) if isinstance(o_target, KINDS) else o_target
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_target is o_target and n_value is o_value:
        return node
    return C28(target=n_target, value=n_value, span=node.span)
def init29(self, expr, span=(0, 0)):
    _set(self, 'expr', expr)
    _set(self, 'span', span)
def eq29(self, other):
    if other.__class__ is self.__class__:
        return (self.expr, ) == (other.expr, )
    return NotImplemented
def hash29(self):
    return hash((self.expr, ))
def repr29(self):
    return f'{self.__class__.__qualname__}(expr={self.expr!r})'
def replace29(self, expr=_KEEP, span=_KEEP):
    return C29(self.expr if expr is _KEEP else expr, self.span if span is _KEEP else span)
def mapper29(node, fn):
    o_expr = node.expr
    n_expr = fn(o_expr) if isinstance(o_expr, KINDS) else o_expr
    if n_expr is o_expr:
        return node
    return C29(expr=n_expr, span=node.span)
def init30(self, target, iter, body, else_=(), filter=None, loop='', loop_helper='', recursive=False, else_counts_completed=False, counter='', last='', span=(0, 0)):
    _set(self, 'target', target)
    _set(self, 'iter', iter)
    _set(self, 'body', body)
    _set(self, 'else_', else_)
    _set(self, 'filter', filter)
    _set(self, 'loop', loop)
    _set(self, 'loop_helper', loop_helper)
    _set(self, 'recursive', recursive)
    _set(self, 'else_counts_completed', else_counts_completed)
    _set(self, 'counter', counter)
    _set(self, 'last', last)
    _set(self, 'span', span)
def eq30(self, other):
    if other.__class__ is self.__class__:
        return (self.target, self.iter, self.body, self.else_, self.filter, self.loop, self.loop_helper, self.recursive, self.else_counts_completed, self.counter, self.last, ) == (other.target, other.iter, other.body, other.else_, other.filter, other.loop, other.loop_helper, other.recursive, other.else_counts_completed, other.counter, other.last, )
    return NotImplemented
def hash30(self):
    return hash((self.target, self.iter, self.body, self.else_, self.filter, self.loop, self.loop_helper, self.recursive, self.else_counts_completed, self.counter, self.last, ))
def repr30(self):
    return f'{self.__class__.__qualname__}(target={self.target!r}, iter={self.iter!r}, body={self.body!r}, else_={self.else_!r}, filter={self.filter!r}, loop={self.loop!r}, loop_helper={self.loop_helper!r}, recursive={self.recursive!r}, else_counts_completed={self.else_counts_completed!r}, counter={self.counter!r}, last={self.last!r})'
def replace30(self, target=_KEEP, iter=_KEEP, body=_KEEP, else_=_KEEP, filter=_KEEP, loop=_KEEP, loop_helper=_KEEP, recursive=_KEEP, else_counts_completed=_KEEP, counter=_KEEP, last=_KEEP, span=_KEEP):
    return C30(self.target if target is _KEEP else target, self.iter if iter is _KEEP else iter, self.body if body is _KEEP else body, self.else_ if else_ is _KEEP else else_, self.filter if filter is _KEEP else filter, self.loop if loop is _KEEP else loop, self.loop_helper if loop_helper is _KEEP else loop_helper, self.recursive if recursive is _KEEP else recursive, self.else_counts_completed if else_counts_completed is _KEEP else else_counts_completed, self.counter if counter is _KEEP else counter, self.last if last is _KEEP else last, self.span if span is _KEEP else span)
def mapper30(node, fn):
    o_target = node.target
    n_target = fn(o_target) if isinstance(o_target, KINDS) else o_target
    o_iter = node.iter
    n_iter = fn(o_iter) if isinstance(o_iter, KINDS) else o_iter
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_else_ = node.else_
    n_else_ = fn(o_else_) if isinstance(o_else_, KINDS) else o_else_
    o_filter = node.filter
    n_filter = fn(o_filter) if isinstance(o_filter, KINDS) else o_filter
    if n_target is o_target and n_iter is o_iter and n_body is o_body and n_else_ is o_else_ and n_filter is o_filter:
        return node
    return C30(target=n_target, iter=n_iter, body=n_body, else_=n_else_, filter=n_filter, loop=node.loop, loop_helper=node.loop_helper, recursive=node.recursive, else_counts_completed=node.else_counts_completed, counter=node.counter, last=node.last, span=node.span)
def init31(self, span=(0, 0)):
    _set(self, 'span', span)
def eq31(self, other):
    if other.__class__ is self.__class__:
        return () == ()
    return NotImplemented
def hash31(self):
    return hash(())
def repr31(self):
    return f'{self.__class__.__qualname__}()'
def replace31(self, span=_KEEP):
    return C31(self.span if span is _KEEP else span)
def mapper31(node, fn):
    if True:
        return node
    return C31(span=node.span)
def init32(self, span=(0, 0)):
    _set(self, 'span', span)
def eq32(self, other):
    if other.__class__ is self.__class__:
        return () == ()
    return NotImplemented
def hash32(self):
    return hash(())
def repr32(self):
    return f'{self.__class__.__qualname__}()'
def replace32(self, span=_KEEP):
    return C32(self.span if span is _KEEP else span)
def mapper32(node, fn):
    if True:
        return node
    return C32(span=node.span)
def init33(self, name, default=None):
    _set(self, 'name', name)
    _set(self, 'default', default)
def eq33(self, other):
    if other.__class__ is self.__class__:
        return (self.name, self.default, ) == (other.name, other.default, )
    return NotImplemented
def hash33(self):
    return hash((self.name, self.default, ))
def repr33(self):
    return f'{self.__class__.__qualname__}(name={self.name!r}, default={self.default!r})'
def replace33(self, name=_KEEP, default=_KEEP):
    return C33(self.name if name is _KEEP else name, self.default if default is _KEEP else default)
def mapper33(node, fn):
    o_name = node.name
    n_name = fn(o_name) if isinstance(o_name, KINDS) else o_name
    o_default = node.default
    n_default = fn(o_default) if isinstance(o_default, KINDS) else o_default
    if n_name is o_name and n_default is o_default:
        return node
    return C33(name=n_name, default=n_default)
def init34(self, ident, name, params, body, wrap='', wrap_args=(), missing_helper='', prologue=(), implicit=0, bind=True, into=False, span=(0, 0)):
    _set(self, 'ident', ident)
    _set(self, 'name', name)
    _set(self, 'params', params)
    _set(self, 'body', body)
    _set(self, 'wrap', wrap)
    _set(self, 'wrap_args', wrap_args)
    _set(self, 'missing_helper', missing_helper)
    _set(self, 'prologue', prologue)
    _set(self, 'implicit', implicit)
    _set(self, 'bind', bind)
    _set(self, 'into', into)
    _set(self, 'span', span)
def eq34(self, other):
    if other.__class__ is self.__class__:
        return (self.ident, self.name, self.params, self.body, self.wrap, self.wrap_args, self.missing_helper, self.prologue, self.implicit, self.bind, self.into, ) == (other.ident, other.name, other.params, other.body, other.wrap, other.wrap_args, other.missing_helper, other.prologue, other.implicit, other.bind, other.into, )
    return NotImplemented
def hash34(self):
    return hash((self.ident, self.name, self.params, self.body, self.wrap, self.wrap_args, self.missing_helper, self.prologue, self.implicit, self.bind, self.into, ))
def repr34(self):
    return f'{self.__class__.__qualname__}(ident={self.ident!r}, name={self.name!r}, params={self.params!r}, body={self.body!r}, wrap={self.wrap!r}, wrap_args={self.wrap_args!r}, missing_helper={self.missing_helper!r}, prologue={self.prologue!r}, implicit={self.implicit!r}, bind={self.bind!r}, into={self.into!r})'
def replace34(self, ident=_KEEP, name=_KEEP, params=_KEEP, body=_KEEP, wrap=_KEEP, wrap_args=_KEEP, missing_helper=_KEEP, prologue=_KEEP, implicit=_KEEP, bind=_KEEP, into=_KEEP, span=_KEEP):
    return C34(self.ident if ident is _KEEP else ident, self.name if name is _KEEP else name, self.params if params is _KEEP else params, self.body if body is _KEEP else body, self.wrap if wrap is _KEEP else wrap, self.wrap_args if wrap_args is _KEEP else wrap_args, self.missing_helper if missing_helper is _KEEP else missing_helper, self.prologue if prologue is _KEEP else prologue, self.implicit if implicit is _KEEP else implicit, self.bind if bind is _KEEP else bind, self.into if into is _KEEP else into, self.span if span is _KEEP else span)
def mapper34(node, fn):
    o_params = node.params
    n_params = fn(o_params) if isinstance(o_params, KINDS) else o_params
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_wrap_args = node.wrap_args
    n_wrap_args = fn(o_wrap_args) if isinstance(o_wrap_args, KINDS) else o_wrap_args
    o_prologue = node.prologue
    n_prologue = fn(o_prologue) if isinstance(o_prologue, KINDS) else o_prologue
    if n_params is o_params and n_body is o_body and n_wrap_args is o_wrap_args and n_prologue is o_prologue:
        return node
    return C34(ident=node.ident, name=node.name, params=n_params, body=n_body, wrap=node.wrap, wrap_args=n_wrap_args, missing_helper=node.missing_helper, prologue=n_prologue, implicit=node.implicit, bind=node.bind, into=node.into, span=node.span)
def init35(self, value, span=(0, 0)):
    _set(self, 'value', value)
    _set(self, 'span', span)
def eq35(self, other):
    if other.__class__ is self.__class__:
        return (self.value, ) == (other.value, )
    return NotImplemented
def hash35(self):
    return hash((self.value, ))
def repr35(self):
    return f'{self.__class__.__qualname__}(value={self.value!r})'
def replace35(self, value=_KEEP, span=_KEEP):
    return C35(self.value if value is _KEEP else value, self.span if span is _KEEP else span)
def mapper35(node, fn):
    o_value = node.value
    n_value = fn(o_value) if isinstance(o_value, KINDS) else o_value
    if n_value is o_value:
        return node
    return C35(value=n_value, span=node.span)
def init36(self, body, span=(0, 0), bindings=()):
    _set(self, 'body', body)
    _set(self, 'span', span)
    _set(self, 'bindings', bindings)
def eq36(self, other):
    if other.__class__ is self.__class__:
        return (self.body, self.bindings, ) == (other.body, other.bindings, )
    return NotImplemented
def hash36(self):
    return hash((self.body, self.bindings, ))
def repr36(self):
    return f'{self.__class__.__qualname__}(body={self.body!r}, bindings={self.bindings!r})'
def replace36(self, body=_KEEP, span=_KEEP, bindings=_KEEP):
    return C36(self.body if body is _KEEP else body, self.span if span is _KEEP else span, self.bindings if bindings is _KEEP else bindings)
def mapper36(node, fn):
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_bindings = node.bindings
    n_bindings = fn(o_bindings) if isinstance(o_bindings, KINDS) else o_bindings
    if n_body is o_body and n_bindings is o_bindings:
        return node
    return C36(body=n_body, span=node.span, bindings=n_bindings)
def init37(self, body, dialect, profile, meta=()):
    _set(self, 'body', body)
    _set(self, 'dialect', dialect)
    _set(self, 'profile', profile)
    _set(self, 'meta', meta)
def eq37(self, other):
    if other.__class__ is self.__class__:
        return (self.body, self.dialect, self.profile, self.meta, ) == (other.body, other.dialect, other.profile, other.meta, )
    return NotImplemented
def hash37(self):
    return hash((self.body, self.dialect, self.profile, self.meta, ))
def repr37(self):
    return f'{self.__class__.__qualname__}(body={self.body!r}, dialect={self.dialect!r}, profile={self.profile!r}, meta={self.meta!r})'
def replace37(self, body=_KEEP, dialect=_KEEP, profile=_KEEP, meta=_KEEP):
    return C37(self.body if body is _KEEP else body, self.dialect if dialect is _KEEP else dialect, self.profile if profile is _KEEP else profile, self.meta if meta is _KEEP else meta)
def mapper37(node, fn):
    o_body = node.body
    n_body = fn(o_body) if isinstance(o_body, KINDS) else o_body
    o_meta = node.meta
    n_meta = fn(o_meta) if isinstance(o_meta, KINDS) else o_meta
    if n_body is o_body and n_meta is o_meta:
        return node
    return C37(body=n_body, dialect=node.dialect, profile=node.profile, meta=n_meta)
