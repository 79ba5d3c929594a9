"""Start-up of the ``pdeval eval`` command: wall time of one small evaluation, median of 10.

Run: ``.venv/bin/python bench/cli_startup.py [--repeat 10]``. It times, as separate
processes (so every run pays the imports, as a script calling the command once per run file
does):

* ``python -c pass`` (the interpreter alone),
* ``python -c "import pandas"`` (the floor pdeval cannot go below: it reads into pandas),
* ``python -m pdeval eval -m map qrels.test results.test`` (trec_eval's 3-topic test files in
  tests/data/trec_eval),
* ``trec_eval -m map`` on the same files when a ``trec_eval`` binary is on the PATH,

and prints the median and the spread of each, and which heavy modules the command imported
(seaborn, matplotlib, scipy, the analysis layer must not be among them). The target of issue
28 is a median of at most 0.35 s for the pdeval line on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO / "tests" / "data" / "trec_eval"
HEAVY = ("seaborn", "matplotlib", "scipy", "scipy.stats", "sklearn", "statsmodels", "pdeval.analysis", "pdeval.report")


def timed(command: list, repeat: int, env: dict) -> tuple[list, list]:
    """Wall times and CPU times (user + system of the child) of ``repeat`` runs. On a loaded
    machine the CPU time is the steadier figure."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    return walls, cpus


def imported_modules(env: dict) -> list:
    """The heavy modules ``pdeval eval`` imports (run in-process once, then listed)."""
    code = (
        "import sys, io, contextlib\n"
        "from pdeval.cli.commands import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['eval', '-m', 'map', {str(DATA / 'qrels.test')!r}, {str(DATA / 'results.test')!r}])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=REPO)
    return json.loads(out.stdout.strip().replace("'", '"'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--source", default=str(REPO), help="the pdeval source tree to time (default: this one)")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=args.source)
    files = [str(DATA / "qrels.test"), str(DATA / "results.test")]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
        "pdeval eval -m map (small file)": [sys.executable, "-m", "pdeval", "eval", "-m", "map", *files],
    }
    if shutil.which("trec_eval"):
        commands["trec_eval -m map (small file)"] = ["trec_eval", "-m", "map", *files]
    print(f"{'command':<36} {'median s':>9} {'min s':>7} {'max s':>7} {'median CPU s':>13}  (n={args.repeat})")
    for name, command in commands.items():
        walls, cpus = timed(command, args.repeat, env)
        print(f"{name:<36} {statistics.median(walls):>9.3f} {min(walls):>7.3f} {max(walls):>7.3f} "
              f"{statistics.median(cpus):>13.3f}")
    heavy = imported_modules(env)
    print("heavy modules imported by pdeval eval:", ", ".join(heavy) if heavy else "none")


if __name__ == "__main__":
    main()
