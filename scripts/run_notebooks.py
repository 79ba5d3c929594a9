#!/usr/bin/env python
"""Execute the notebooks with their full settings and save them with their outputs.

Run by hand from the repository root (the tests run them separately, in fast mode)::

    .venv/bin/python scripts/run_notebooks.py                 # every notebook
    .venv/bin/python scripts/run_notebooks.py rpref pool_bias  # some of them
    .venv/bin/python scripts/run_notebooks.py --fast           # PDEVAL_FAST=1, outputs not saved

The kernel is always this interpreter (``sys.executable``) whatever kernel specs the user has
installed: a temporary ``python3`` kernel spec pointing at it is the only one the kernel
manager sees. Figures go to ``notebooks/figures/`` (full runs only).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"


def execute(path: Path, *, timeout: int = 3600) -> tuple[nbformat.NotebookNode, float]:
    """Execute the notebook at ``path`` in a kernel running ``sys.executable``."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as specs:
        write_kernel_spec(Path(specs) / "python3")
        manager = KernelSpecManager()
        manager.kernel_dirs = [specs]
        manager.ensure_native_kernel = False
        km = KernelManager(kernel_name="python3", kernel_spec_manager=manager)
        client = NotebookClient(
            nb, km=km, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        start = time.perf_counter()
        client.execute()
        elapsed = time.perf_counter() - start
    return nb, elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebook names (without .ipynb); default: all")
    parser.add_argument("--fast", action="store_true", help="PDEVAL_FAST=1; the notebooks are not saved")
    args = parser.parse_args(argv)
    paths = [NOTEBOOKS / f"{n.removesuffix('.ipynb')}.ipynb" for n in args.names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.fast:
        os.environ["PDEVAL_FAST"] = "1"
        os.environ.setdefault("PDEVAL_FIGURES", tempfile.mkdtemp(prefix="pdeval-figures-"))
    else:
        os.environ.pop("PDEVAL_FAST", None)
        os.environ.pop("PDEVAL_FIGURES", None)
    total = 0.0
    for path in paths:
        nb, elapsed = execute(path)
        total += elapsed
        if not args.fast:
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            nbformat.write(nb, path)
        print(f"{path.name}: {elapsed:.1f} s", flush=True)
    print(f"total: {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
