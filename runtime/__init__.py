"""What generated modules import at render time: standard library only, one package per
dialect (``jinja/``: transformers' sandboxed environment; ``go/``: text/template and Ollama),
plus ``budget`` (work bounds shared by both). Never imports the compiler, lark or jinja2."""
