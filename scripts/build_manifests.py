"""Rebuild the download manifests of the full collections (``pdeval/datasets/manifests/*.tsv``).

A manifest lists, for every file that :func:`pdeval.datasets.load` fetches, its role in the data
set, where it is kept in the cache (and in a mirror), its public source (``owner/repo@commit:path``)
and the git blob SHA-1 and size of the original, so that every download is verified byte for byte.
The facts come from the provenance files of the evaluation data kept beside the repository
(``../shared/data``: ``SOURCE_FILES.tsv`` and ``PROVENANCE.md`` or ``PROVENANCE.files.tsv``)::

    python scripts/build_manifests.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "pdeval" / "datasets" / "manifests"

#: data set name -> (folder, {local path or glob prefix: role}); roles: runs, qrels, partial_qrels, extra
COLLECTIONS = {
    "clef2015": ("clef2015-chs-task2", {
        "runs/": "runs",
        "qrels/qrels.eng.clef2015.qtest.graded.txt": "qrels",
    }),
    "clef2016": ("clef2016-chs-task2", {
        "runs/": "runs",
        "qrels.txt": "qrels",
    }),
    "clef2018-full": ("clef2018-chs-task1", {
        "runs/": "runs",
        "qrels.txt": "qrels",
        "aux/qrels_partial_20180911.txt": "partial_qrels",
    }),
    "trec-dl21": ("trec-dl21", {
        "runs/": "runs",
        "qrels-pass.dl21.human.txt": "qrels",
        "gpt4_judgments/gpt4_judgments_dl2021_processed.txt": "extra",
    }),
}

HEADER = "role\tlocal_path\tsource\tgit_blob_sha1\tbytes\n"


def _role(local: str, roles: dict[str, str]) -> str | None:
    for prefix, role in roles.items():
        if local == prefix or (prefix.endswith("/") and local.startswith(prefix)):
            return role
    return None


def _source_files(folder: Path) -> list[tuple[str, str, str, int]]:
    """(local path, owner/repo@commit:path, blob sha1, bytes) for every file of a data folder."""
    listing = folder / "SOURCE_FILES.tsv"
    if listing.exists():
        text = (folder / "PROVENANCE.md").read_text()
        repo = re.search(r"Repository: `([^`]+)`", text).group(1)
        commit = re.search(r"commit `([0-9a-f]{40})`", text).group(1)
        rows = []
        for line in listing.read_text().splitlines()[1:]:
            blob, size, source, local = line.split("\t")
            rows.append((local, f"{repo}@{commit}:{source}", blob, int(size)))
        return rows
    rows = []
    for line in (folder / "PROVENANCE.files.tsv").read_text().splitlines():
        name, source, blob, _, size, *_ = line.split("\t")
        local = name.split(" (")[0]
        rows.append((local, source, blob.removeprefix("blob="), int(size.split("=")[1])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (folder, roles) in COLLECTIONS.items():
        rows = []
        for local, source, blob, size in _source_files(args.data / folder):
            role = _role(local, roles)
            if role is not None:
                rows.append(f"{role}\t{folder}/{local}\t{source}\t{blob}\t{size}\n")
        rows.sort()
        (OUT / f"{name}.tsv").write_text(HEADER + "".join(rows))
        print(f"{name}: {len(rows)} files")


if __name__ == "__main__":
    main()
