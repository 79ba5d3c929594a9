"""Write the API reference page from ``pdeval.__all__`` before Sphinx reads the sources.

The page lists every public name, grouped by the package that defines it (so a name added to
``pdeval.__all__`` appears without editing the docs), in ``autosummary`` tables whose stubs
Sphinx generates into ``api/generated/``. Both are build products (``docs/api/`` is ignored by
git).
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path

#: section title of each defining package, most specific first
SECTIONS: list[tuple[str, str]] = [
    ("pdeval.sources", "Reading and writing files"),
    ("pdeval.datasets", "Reading and writing files"),
    ("pdeval.api", "Evaluating"),
    ("pdeval.evaluation", "Evaluating"),
    ("pdeval.engine", "Evaluating"),
    ("pdeval.measures", "Measures"),
    ("pdeval.judgments", "Making judgments incomplete"),
    ("pdeval.analysis.estimates", "Estimates and pool bias"),
    ("pdeval.analysis.pool_bias", "Estimates and pool bias"),
    ("pdeval.analysis.judges", "Automatic judgments"),
    ("pdeval.analysis.statistics", "Many systems at once"),
    ("pdeval.analysis.reproducibility", "Reproducibility and standardisation"),
    ("pdeval.analysis", "Judging the measures"),
    ("pdeval.integrations", "The ecosystem"),
    ("pdeval.frames", "The ecosystem"),
]

INTRO = """\
API reference
=============

Every name in ``pdeval.__all__``, grouped by the part of the package that defines it. Each
function's page gives its parameters (with their defaults), what it returns (the columns of the
frames) and what it raises. A function whose first argument is a run, qrels or result frame is
also a method of the ``df.ir`` accessor: ``runs.ir.evaluate(qrels, ...)`` is
``pdeval.evaluate(runs, qrels, ...)``. The naming rules shared by all of them are in
:doc:`../conventions`.

.. currentmodule:: pdeval
"""


def section_of(name: str, obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return "Modules"
    if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj) or callable(obj)):
        return "Constants"
    module = getattr(obj, "__module__", "") or ""
    for prefix, title in SECTIONS:
        if module == prefix or module.startswith(prefix + "."):
            return title
    return "Other"


def api_page(package) -> str:
    """The reST of the API reference for ``package.__all__``."""
    groups: dict[str, list[str]] = {}
    for name in sorted(package.__all__, key=str.lower):
        groups.setdefault(section_of(name, getattr(package, name)), []).append(name)
    order = list(dict.fromkeys([title for _, title in SECTIONS] + ["Other", "Modules", "Constants"]))
    lines = [INTRO]
    for title in order:
        if title not in groups:
            continue
        lines += ["", title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {name}" for name in groups[title]]
    lines += figures_section()
    return "\n".join(lines) + "\n"


def figures_section() -> list[str]:
    """The figures, reached as ``df.ir.plot.<figure>(...)`` (the frame is their first argument)."""
    from pdeval.report import figures

    title = "Figures (df.ir.plot)"
    lines = ["", title, "-" * len(title), "",
             "The seaborn figures of :mod:`pdeval.report.figures`: ``result.ir.plot.topic_distributions(measures=\"AP\")``",
             "is ``pdeval.plotting.topic_distributions(result, measures=\"AP\")``.", "",
             ".. currentmodule:: pdeval.report.figures", "", ".. autosummary::", "   :toctree: generated", ""]
    return lines + [f"   {name}" for name in figures.__all__] + ["", ".. currentmodule:: pdeval"]


def write_api_page(source_dir: Path) -> Path:
    import pdeval

    folder = source_dir / "api"
    folder.mkdir(exist_ok=True)
    page = folder / "index.rst"
    text = api_page(pdeval)
    if not page.exists() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")
    return page


def sync_notebooks(source_dir: Path) -> Path:
    """Copy the executed notebooks and ``REPRODUCTIONS.md`` into ``docs/notebooks/``.

    Sphinx reads documents only inside its source folder and resolves links through symlinks,
    so the notebooks are copied (a build product ignored by git) with their folder layout, which
    keeps the relative links of ``REPRODUCTIONS.md`` working. Only changed files are copied;
    copies whose original is gone are removed.
    """
    import shutil

    origin = source_dir.parent / "notebooks"
    target = source_dir / "notebooks"
    wanted = {
        path.relative_to(origin)
        for pattern in ("*.ipynb", "collections/*.ipynb", "REPRODUCTIONS.md")
        for path in origin.glob(pattern)
    }
    for relative in sorted(wanted):
        source, copy = origin / relative, target / relative
        if copy.exists() and copy.stat().st_size == source.stat().st_size and copy.read_bytes() == source.read_bytes():
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copy)
    index = Path("index.md")
    for copy in list(target.rglob("*")):
        if copy.is_file() and copy.relative_to(target) not in wanted | {index}:
            copy.unlink()
    text = notebooks_page(origin)
    if not (target / index).exists() or (target / index).read_text(encoding="utf-8") != text:
        (target / index).write_text(text, encoding="utf-8")
    return target


def notebook_title(path: Path) -> str:
    """The first level-1 heading of a notebook's markdown cells, else its file name."""
    import json

    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip().replace("<", "").replace(">", "")  # toctree title syntax
    return path.stem


def notebooks_page(origin: Path) -> str:
    """``notebooks/index.md``: the reproductions table, each notebook by its title, and the copies
    run on other collections (``collections/NAME.COLLECTION.ipynb``) by name and collection."""
    own = sorted(origin.glob("*.ipynb"))
    copies = sorted((origin / "collections").glob("*.ipynb"))
    lines = [
        "# Notebooks",
        "",
        "The notebooks of `notebooks/`, shown with the outputs they were committed with (they are",
        "not re-run to build this site; `make notebooks` re-runs them). The copies under",
        "`notebooks/collections/` run a notebook on another collection: their outputs are that",
        "collection's, their text was written for the notebook's own run.",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        "REPRODUCTIONS",
        *[f"{notebook_title(path)} <{path.stem}>" for path in own],
        "```",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        ":caption: On other collections",
        "",
        *[f"{path.stem.split('.', 1)[0]} on {path.stem.split('.', 1)[-1]} <collections/{path.stem}>" for path in copies],
        "```",
        "",
    ]
    return "\n".join(lines)
