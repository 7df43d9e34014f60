"""The installed distribution is the one package ``tmpl2py``: no generic top-level names
(``compiler``, ``runtime``, ``bench``) in site-packages, editable installs included."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_configured_package_is_under_tmpl2py() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["packages"] and all(p == "tmpl2py" or p.startswith("tmpl2py.") for p in config["packages"])
    assert set(config["package-dir"]) <= set(config["packages"])
    assert all(p in config["packages"] for p in ("tmpl2py.compiler", "tmpl2py.runtime"))
    entry = config.get("py-modules", [])
    assert not entry, "no top-level modules either"


def test_the_installed_distribution_names_only_tmpl2py() -> None:
    dist = importlib.metadata.distribution("tmpl2py")
    top = (dist.read_text("top_level.txt") or "tmpl2py").split()
    assert top == ["tmpl2py"]
    (script,) = [e for e in dist.entry_points if e.name == "tmpl2py"]
    assert script.value == "tmpl2py.cli:main"


def test_outside_the_checkout_only_tmpl2py_imports(tmp_path: Path) -> None:
    code = (
        "import importlib.util, tmpl2py, tmpl2py.compiler, tmpl2py.runtime.jinja, tmpl2py.runtime.go.ollama;"
        "print([n for n in ('compiler', 'runtime', 'bench') if importlib.util.find_spec(n) is not None])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_facade_names_stay_its_own_after_their_modules_are_imported() -> None:
    import tmpl2py
    import tmpl2py.loader  # noqa: F401  (binds the submodule on the package)
    import tmpl2py.sources  # noqa: F401

    assert callable(tmpl2py.load) and tmpl2py.load.__module__ == "tmpl2py.loader"
    assert tmpl2py.compile_template.__module__ == "tmpl2py.compiler.api"
    assert issubclass(tmpl2py.SourceError, Exception)
