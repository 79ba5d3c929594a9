"""pdeval on real run files, side by side with pytrec_eval, pandas and the trec_eval binary.

Run: ``.venv/bin/python bench/real.py [--reps 5] [--only evaluate,read,cli,big]``; writes
``bench/out/real.json`` and ``bench/out/real.md`` (which ``bench/run.py --render`` puts into
``RESULTS.md``). Collections come from the shared data folder beside the repository
(``../shared/data``); a workload whose data is absent is skipped and says so.

Workloads (targets in brackets):

* ``evaluate``: AP, P@10, nDCG, Bpref, infAP on every run of a collection, loaded from its
  files once (not timed), against pytrec_eval including the conversion of the frames to its
  dicts [pdeval <= 1/4]. Both with 32-bit scores (``score_precision="float32"``; the
  pytrec-eval-terrier wheel keeps floats), and the values compared. CLEF 2015 (68 runs,
  4.5M rows), TREC DL 2021 (63 runs, long passage ids), CLEF 2018 at full depth (24 runs,
  ``duplicates="first"``; pytrec_eval's dicts keep one score per document too).
* ``read``: ``pdeval.read_run`` of the 68 CLEF 2015 files against
  ``pandas.read_csv(sep=r"\\s+", header=None)`` of each [pdeval <= 1/2].
* ``cli``: ``python -m pdeval eval QRELS runs/ -m AP P@10 nDCG Bpref infAP -q`` against NIST's
  trec_eval 10.0 run once per file with the same measures (``-q -m map -m P.10 -m ndcg
  -m bpref -m infAP``), both on the same uncompressed files (trec_eval reads no gzip) and
  writing to /dev/null [pdeval <= 1/2]. trec_eval is built with ``make`` from
  ``../shared/tools/trec_eval-10.0`` in a temporary folder; without it the peer is skipped.
* ``big``: a 10-million-row run file (gzip; 10,000 topics x 1,000 documents, CLEF-like 19-byte
  ids, tied scores), ``read_run`` + ``evaluate`` in a fresh process, peak RSS of the whole
  process (``ru_maxrss``) [<= 1.5 GB]; again with a malformed line at row 7.6M, where the
  error must name the line.

Every timed pair runs in one process, alternating (pdeval, peer, pdeval, peer, ...) after a
warm-up of each, so that both see the same load; medians are reported. The machine is
shared: read the ratios. pdeval uses every core where the work is large (:mod:`pdeval.common.threads`);
the peers use one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

FIVE = ["AP", "P@10", "nDCG", "Bpref", "infAP"]
TREC_EVAL_MEASURES = ["-m", "map", "-m", "P.10", "-m", "ndcg", "-m", "bpref", "-m", "infAP"]

#: collection -> (run folder, qrels file, evaluate options)
COLLECTIONS = {
    "clef2015": ("clef2015-chs-task2/runs", "clef2015-chs-task2/qrels/qrels.eng.clef2015.qtest.graded.txt", {}),
    "trec-dl21": ("trec-dl21/runs", "trec-dl21/qrels-pass.dl21.human.txt", {}),
    "clef2018-full": ("clef2018-chs-task1/runs", "clef2018-chs-task1/qrels.txt", {"duplicates": "first"}),
}


def interleaved(functions: dict, reps: int) -> dict:
    """Median wall time of each function, calls alternating, after one warm-up call each."""
    for function in functions.values():
        function()
    times: dict = {name: [] for name in functions}
    for _ in range(reps):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: {"median": statistics.median(t), "times": t} for name, t in times.items()}


def bench_evaluate(collection: str, reps: int) -> Optional[dict]:
    import numpy as np
    import pandas as pd

    import pdeval
    from tools import run_pytrec_eval, tidy

    runs, qrels_file, options = COLLECTIONS[collection]
    if not (DATA / runs).is_dir():
        return {"skipped": f"{DATA / runs} is absent"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pdeval.read_run(DATA / runs, duplicates=options.get("duplicates", "error"))
    qrels = pdeval.read_qrels(DATA / qrels_file)
    raw = run  # pytrec_eval gets the frame as read (after the duplicates policy)

    def ours():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pdeval.evaluate(run, qrels, FIVE, score_precision="float32", **options)

    def theirs():
        return run_pytrec_eval(raw, qrels, FIVE)

    timing = interleaved({"pdeval": ours, "pytrec_eval": theirs}, reps)
    a = tidy("pdeval", ours(), FIVE, [])
    b = tidy("pytrec_eval", theirs(), FIVE, [])
    merged = a.merge(b, on=["run", "query_id", "measure"], suffixes=("_pdeval", "_peer"))
    diff = (merged["value_pdeval"] - merged["value_peer"]).abs()
    return {
        "rows": len(run), "runs": int(run["run"].nunique()), "judgments": len(qrels),
        "doc_id_bytes": int(run["doc_id"].str.len().max()),
        "timing": timing, "ratio": timing["pdeval"]["median"] / timing["pytrec_eval"]["median"],
        "compared": len(merged), "max_abs_diff": float(diff.max()) if len(diff) else float("nan"),
        "options": options,
    }


def bench_read(reps: int) -> dict:
    import pandas as pd

    import pdeval

    folder = DATA / COLLECTIONS["clef2015"][0]
    if not folder.is_dir():
        return {"skipped": f"{folder} is absent"}
    files = sorted(folder.iterdir())
    rows = {}

    def ours():
        rows["pdeval"] = len(pdeval.read_run(files))

    def theirs():
        rows["pandas"] = sum(len(pd.read_csv(f, sep=r"\s+", header=None)) for f in files)

    timing = interleaved({"pdeval": ours, "pandas": theirs}, reps)
    return {"files": len(files), "rows": rows, "timing": timing,
            "ratio": timing["pdeval"]["median"] / timing["pandas"]["median"]}


def build_trec_eval(workdir: Path) -> Optional[Path]:
    source = SHARED / "tools" / "trec_eval-10.0"
    if not source.is_dir() or shutil.which("make") is None:
        return None
    target = workdir / "trec_eval-10.0"
    shutil.copytree(source, target)
    done = subprocess.run(["make"], cwd=target, capture_output=True, text=True)
    binary = target / "trec_eval"
    return binary if done.returncode == 0 and binary.exists() else None


def bench_cli(reps: int) -> dict:
    runs, qrels_file, _ = COLLECTIONS["clef2015"]
    if not (DATA / runs).is_dir():
        return {"skipped": f"{DATA / runs} is absent"}
    qrels = DATA / qrels_file
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        plain = workdir / "runs"
        plain.mkdir()
        for path in sorted((DATA / runs).iterdir()):  # trec_eval reads no gzip: both get plain files
            (plain / path.name[: -len(".gz")]).write_bytes(gzip.decompress(path.read_bytes()))
        binary = build_trec_eval(workdir)
        env = dict(os.environ, PYTHONPATH=str(REPO))
        measures = [part for name in FIVE for part in ("-m", name)]  # one measure per -m, as trec_eval
        pdeval_command = [sys.executable, "-m", "pdeval", "eval", str(qrels), str(plain), *measures, "-q"]
        gz_command = [sys.executable, "-m", "pdeval", "eval", str(qrels), str(DATA / runs), *measures, "-q"]

        def run(command):
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)

        functions = {"pdeval": lambda: run(pdeval_command), "pdeval (gzip files)": lambda: run(gz_command)}
        if binary is not None:
            def trec_eval():
                for path in sorted(plain.iterdir()):
                    subprocess.run([str(binary), "-q", *TREC_EVAL_MEASURES, str(qrels), str(path)],
                                   stdout=subprocess.DEVNULL, check=True)
            functions["trec_eval"] = trec_eval
        timing = interleaved(functions, reps)
    out = {"files": len(list((DATA / runs).iterdir())), "timing": timing, "command": " ".join(pdeval_command[1:])}
    if binary is not None:
        out["ratio"] = timing["pdeval"]["median"] / timing["trec_eval"]["median"]
    else:
        out["trec_eval"] = "skipped: ../shared/tools/trec_eval-10.0 or make is absent, or the build failed"
    return out


BIG_ROWS = 10_000_000


def write_big_run(path: Path, bad_row: Optional[int] = None) -> None:
    """10,000 topics x 1,000 documents, 19-byte ids, scores rounded to 2 decimals (ties),
    written in rank order; optionally a line with 5 fields at ``bad_row`` (1-based)."""
    import numpy as np

    rng = np.random.default_rng(1)
    with gzip.open(path, "wt", compresslevel=1) as handle:
        for start in range(0, 10_000, 500):
            topics = np.arange(start, start + 500)
            qid = np.repeat([f"q{t}" for t in topics], 1000)
            site = rng.integers(0, 5000, 500_000)
            page = rng.integers(0, 1_000_000, 500_000)
            docs = np.char.add(np.char.add(np.char.mod("site%04d_12_", site), ""), np.char.mod("%06d", page))
            score = np.round(-np.sort(-rng.random((500, 1000)), axis=1), 2).ravel()
            rank = np.tile(np.arange(1, 1001), 500)
            lines = np.char.add(np.char.add(np.char.add(qid, " Q0 "), docs), " ")
            text = [f"{l}{r} {s} big\n" for l, r, s in zip(lines.tolist(), rank.tolist(), score.tolist())]
            if bad_row is not None and start * 1000 < bad_row <= (start + 500) * 1000:
                i = bad_row - start * 1000 - 1
                text[i] = text[i].rsplit(" ", 1)[0].rsplit(" ", 1)[0] + "\n"
            handle.write("".join(text))


def big_child(path: str, qrels_path: str) -> None:
    """In a fresh process: read + evaluate, print the peak RSS (or the error and the peak)."""
    import pdeval
    from pdeval.errors import ParseError

    start = time.perf_counter()
    out = {}
    try:
        run = pdeval.read_run(path, duplicates="first")
        out["read_seconds"] = time.perf_counter() - start
        qrels = pdeval.read_qrels(qrels_path)
        result = pdeval.evaluate(run, qrels, FIVE, duplicates="first")
        out["values"] = len(result)
    except ParseError as error:
        out["error"] = str(error)
    out["seconds"] = time.perf_counter() - start
    out["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print("RESULT " + json.dumps(out), flush=True)


def bench_big() -> dict:
    OUT.mkdir(exist_ok=True)
    good, bad, qrels = OUT / "big_10M.txt.gz", OUT / "big_10M_bad.txt.gz", OUT / "big_qrels.txt"
    bad_row = 7_600_000
    if not good.exists():
        write_big_run(good)
    if not bad.exists():
        write_big_run(bad, bad_row)
    if not qrels.exists():  # the first 20 documents of every topic judged (a depth-20 pool of this run)
        with gzip.open(good, "rt") as handle, open(qrels, "w") as out:
            for i, line in enumerate(handle):
                fields = line.split()
                if int(fields[3]) <= 20:
                    out.write(f"{fields[0]} 0 {fields[2]} {i % 3}\n")
    out = {}
    for name, path in (("valid", good), ("malformed line at row 7,600,000", bad)):
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--big-child", str(path), str(qrels)],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
        line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
        out[name] = json.loads(line[-1][7:]) if line else {"failed": done.stderr[-2000:]}
    out["bad_row"] = bad_row
    return out


def render(results: dict) -> str:
    lines = ["## Real collections", "",
             "`bench/real.py` (pdeval, pytrec_eval, pandas and NIST's trec_eval 10.0 on the shared data's run files). "
             "Each pair of tools runs in one process, calls alternating after a warm-up, medians of "
             f"{results.get('reps')} calls. pdeval uses both cores of this machine where the work is large "
             "(a run of more than half a million rows ranked in parts, in threads; run files parsed ahead in threads); "
             "pytrec_eval, pandas and trec_eval use one. "
             f"Measured {results.get('date')} at commit `{results.get('commit')}`; "
             "the machine was shared with other jobs (load average "
             f"{results.get('load')}), so read the ratios, not the seconds.", ""]
    lines += ["| workload | pdeval | peer | pdeval / peer | target | met | values |", "|---|---|---|---|---|---|---|"]
    for collection in COLLECTIONS:
        r = results.get(f"evaluate/{collection}")
        if not r:
            continue
        if "skipped" in r:
            lines.append(f"| evaluate, {collection} | skipped: {r['skipped']} | | | | | |")
            continue
        t = r["timing"]
        dup = ", duplicates='first'" if r["options"].get("duplicates") else ""
        lines.append(
            f"| `evaluate`, 5 measures, {collection}: {r['runs']} runs, {r['rows']:,} rows, ids up to {r['doc_id_bytes']} bytes{dup} "
            f"| {t['pdeval']['median']:.2f} s | pytrec_eval incl. dicts {t['pytrec_eval']['median']:.2f} s "
            f"| {r['ratio']:.2f} | <= 0.25 | {'yes' if r['ratio'] <= 0.25 else 'no'} "
            f"| max diff {r['max_abs_diff']:.1e} over {r['compared']:,} |")
    r = results.get("read")
    if r and "skipped" not in r:
        t = r["timing"]
        lines.append(f"| `read_run`, 68 CLEF 2015 gzip files ({r['rows']['pdeval']:,} rows) | {t['pdeval']['median']:.2f} s "
                     f"| `pandas.read_csv(sep=r'\\s+', header=None)` {t['pandas']['median']:.2f} s | {r['ratio']:.2f} | <= 0.5 "
                     f"| {'yes' if r['ratio'] <= 0.5 else 'no'} | same row count: {r['rows']['pdeval'] == r['rows']['pandas']} |")
    r = results.get("cli")
    if r and "skipped" not in r:
        t = r["timing"]
        if "trec_eval" in t:
            lines.append(f"| CLI end to end, 68 CLEF 2015 files (plain text), `-q`, 5 measures | {t['pdeval']['median']:.2f} s "
                         f"(gzip files: {t['pdeval (gzip files)']['median']:.2f} s) | trec_eval 10.0, once per file "
                         f"{t['trec_eval']['median']:.2f} s | {r['ratio']:.2f} | <= 0.5 | {'yes' if r['ratio'] <= 0.5 else 'no'} | |")
        else:
            lines.append(f"| CLI end to end | {t['pdeval']['median']:.2f} s | {r['trec_eval']} | | | | |")
    r = results.get("big")
    if r:
        for name in ("valid", "malformed line at row 7,600,000"):
            x = r.get(name, {})
            if "peak_rss_bytes" in x:
                peak = x["peak_rss_bytes"] / 1e9
                error = re.sub(r"^\S*/", "", x.get("error", ""))  # the file's name, not where it lies
                what = (f"error: {error[:90]}..." if "error" in x else f"{x.get('values', 0):,} values")
                lines.append(f"| 10M-row gzip run file, read + evaluate, {name} | peak RSS {peak:.2f} GB, {x['seconds']:.0f} s "
                             f"| | | <= 1.5 GB | {'yes' if peak <= 1.5 else 'no'} | {what} |")
    lines += ["", "Reproduce: `python bench/real.py` (all), or `--only evaluate`, `read`, `cli`, `big`.", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", help="comma-separated: evaluate,read,cli,big")
    parser.add_argument("--collections", help="comma-separated collections for 'evaluate'")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--big-child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--render", action="store_true", help="only rewrite bench/out/real.md from real.json")
    args = parser.parse_args(argv)
    if args.render:
        (OUT / "real.md").write_text(render(json.loads((OUT / "real.json").read_text())))
        return
    if args.big_child:
        big_child(*args.big_child)
        return
    if args.worker:
        kind, name = args.worker
        result = bench_evaluate(name, args.reps) if kind == "evaluate" else {"read": bench_read, "cli": bench_cli}[kind](args.reps)
        print("RESULT " + json.dumps(result), flush=True)
        return
    OUT.mkdir(exist_ok=True)
    store = OUT / "real.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    chosen = args.only.split(",") if args.only else ["evaluate", "read", "cli", "big"]
    jobs = []
    if "evaluate" in chosen:
        jobs += [("evaluate", c) for c in (args.collections.split(",") if args.collections else COLLECTIONS)]
    jobs += [(kind, kind) for kind in ("read", "cli") if kind in chosen]
    for kind, name in jobs:  # each in a fresh process
        print(f"[{time.strftime('%H:%M:%S')}] {kind} {name} ...", flush=True)
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", kind, name, "--reps", str(args.reps)],
                              capture_output=True, text=True)
        line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
        if not line:
            print(done.stderr[-3000:], flush=True)
            continue
        results[f"{kind}/{name}" if kind == "evaluate" else kind] = json.loads(line[-1][7:])
        print(json.dumps({k: v for k, v in results[f"{kind}/{name}" if kind == "evaluate" else kind].items()
                          if k in ("ratio", "max_abs_diff", "skipped")}), flush=True)
        store.write_text(json.dumps(results, indent=1))
    if "big" in chosen:
        print(f"[{time.strftime('%H:%M:%S')}] big ...", flush=True)
        results["big"] = bench_big()
        print(json.dumps(results["big"])[:1000], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    results.update(reps=args.reps, date=time.strftime("%Y-%m-%d %H:%M %Z"), commit=commit,
                   load=" ".join(f"{x:.1f}" for x in os.getloadavg()))
    store.write_text(json.dumps(results, indent=1))
    (OUT / "real.md").write_text(render(results))
    print(render(results))


if __name__ == "__main__":
    main()
