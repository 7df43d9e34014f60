"""Jinja2 as transformers' chat-template environment runs it (``ImmutableSandboxedEnvironment``
with transformers' globals and filters). Standard library only.

- ``core``: errors, the ``Undefined`` value (its behaviour matrix opens the module), the
  sandbox's attribute and item access, printing and concatenation;
- ``objects``: ``namespace``, ``loop``, macros, ``dict``/``range``/``self``, ``cycler``/
  ``joiner``/``lipsum``, ``raise_exception``/``strftime_now``, ``{% generation %}`` spans;
- ``access``: attribute and item lookups, the template's name lookups, calls through the sandbox;
- ``markup``, ``filters``: markupsafe's printing rules; jinja2's builtin filters (with
  transformers' ``tojson``) and tests;
- ``loading``: ``include``/``import``/``from``/``extends`` failing as without a loader;
- ``blocks``: ``{% block %}``, ``self.NAME()`` and ``super()`` without a parent template;
- ``autoescape``: what ``{% autoescape true %}`` compiles differently (helper namespace
  ``jinja_autoescape``, imported only by templates that use it);
- ``hf``: transformers' ``render_jinja_template`` input handling (the ``hf`` profile).

This package's namespace is the helper namespace ``jinja.*`` of the IR: generated modules
import ``from tmpl2py.runtime.jinja import getattr_, ...``.
"""

from .core import *  # noqa: F401,F403
from .core import __all__ as _core_names
from .objects import *  # noqa: F401,F403
from .objects import __all__ as _object_names
from .access import *  # noqa: F401,F403
from .access import __all__ as _access_names

#: the helpers of templates that load others or define blocks, imported on first use (a
#: template without them, most, never loads these modules); tests/unit checks each list
#: against its module's ``__all__``
LAZY = {
    "loading": (
        "NO_LOADER",
        "TemplateNotFound",
        "TemplatesNotFound",
        "extends",
        "macro_generator",
        "make_generator_macro",
        "include_template",
        "load_template",
    ),
    "blocks": (
        "BlockReference",
        "block_name",
        "no_parent_block",
        "required_block",
        "template_reference",
    ),
}
_LAZY_HOME = {name: module for module, names in LAZY.items() for name in names}

__all__ = [
    *_core_names,
    *_object_names,
    *_access_names,
    *_LAZY_HOME,
]


def __getattr__(name: str) -> object:
    """A helper of ``LAZY``, from its module on first use."""
    module = _LAZY_HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "loading":
        from . import loading as home
    else:
        from . import blocks as home
    value = getattr(home, name)
    globals()[name] = value
    return value
