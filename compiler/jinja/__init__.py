"""The Jinja dialect (transformers' chat-template environment): ``frontend.parse(source) ->
ir.Module``. ``grammar.lark`` and the post-lexer in ``frontend`` (jinja2's lexing and
whitespace rules), ``lowering`` (constructs -> IR), ``library`` (the filters and tests the
runtime defines, as helper names)."""

from .. import lark_import  # noqa: F401 - before Lark is imported (see there)
