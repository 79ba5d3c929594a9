#!/usr/bin/env python
"""Build ``data/cranfield/`` (used by the notebooks) from the four original Cranfield files.

Run by hand from the repository root, never by the tests::

    .venv/bin/python scripts/build_cranfield.py --source DIR [--compare DIR]

``--source`` is a folder holding the original ``cran.all.1400``, ``cran.qry``, ``cranqrel``
and ``cranqrel.readme`` (for example a checkout of the public GitHub repository named in
``data/cranfield/PROVENANCE.md``; CRLF or LF line endings both work). The script checks the
MD5 of each file (after removing CR characters) against the values in PROVENANCE.md, then
writes

* ``docs.jsonl.gz`` -- one JSON object per document: ``doc_id`` ("1".."1400"), ``title``,
  ``author``, ``bib``, ``text`` (the ``.T .A .B .W`` fields, each stripped of surrounding
  whitespace, internal newlines kept; note that ``.W`` repeats the title);
* ``queries.tsv`` -- ``query_id`` (1..225, the query's *position* in ``cran.qry``, which is
  the number ``cranqrel`` uses), ``original_id`` (the ``.I`` number), ``text`` (whitespace
  collapsed);
* ``qrels.txt`` -- TREC qrels ``query_id 0 doc_id grade`` with ``grade = 5 - code``
  (4 = complete answer ... 1 = minimum interest), in ``cranqrel`` order, without the
  ``-1`` pairs;
* ``source_docs.tsv`` -- the ``-1`` pairs (the document each question was written from).

gzip output is deterministic (no file name, mtime 0), so a rebuild gives the same bytes.
``--compare DIR`` reads a folder with files of the same names (``docs.jsonl`` may be
uncompressed) and checks that every table is identical -- a cross-check against another
derivation of the same originals.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "data" / "cranfield"

#: MD5 of the original files after removing CR characters (see PROVENANCE.md)
MD5 = {
    "cran.all.1400": "cc125929881f34ccbbc00ad13c5d4291",
    "cran.qry": "39fd301d8e8e2226ccf179d23f2b4f6b",
    "cranqrel": "c62b979aa6edfe65aa9dcbcf74f99c62",
    "cranqrel.readme": "e3410d0985721346d45c43de441000f7",
}
FIELDS = {".T": "title", ".A": "author", ".B": "bib", ".W": "text"}
MARKER = re.compile(r"^\.I\s+(\S+)\s*$")


def read_original(source: Path, name: str) -> str:
    data = (source / name).read_bytes().replace(b"\r", b"")
    digest = hashlib.md5(data).hexdigest()
    if digest != MD5[name]:
        raise SystemExit(f"{name}: MD5 {digest} differs from the expected {MD5[name]}")
    return data.decode("ascii")


def records(text: str) -> list[tuple[str, dict[str, str]]]:
    """Split a ``.I``-structured file into (id, {field marker: raw text}) in file order."""
    out: list[tuple[str, dict[str, list[str]]]] = []
    field = None
    for line in text.split("\n"):
        match = MARKER.match(line)
        if match:
            out.append((match.group(1), {}))
            field = None
            continue
        marker = line.strip()
        if marker in FIELDS and line == marker:
            field = marker
            out[-1][1].setdefault(field, [])
            continue
        if field is None:
            if line.strip():
                raise SystemExit(f"text outside a field: {line[:60]!r}")
            continue
        out[-1][1][field].append(line)
    return [(rid, {k: "\n".join(v) for k, v in fields.items()}) for rid, fields in out]


def parse_docs(text: str) -> list[dict[str, str]]:
    docs = []
    for position, (rid, fields) in enumerate(records(text), start=1):
        if int(rid) != position:
            raise SystemExit(f"document {rid} is at position {position}")
        docs.append({"doc_id": str(position), **{FIELDS[m]: fields.get(m, "").strip() for m in FIELDS}})
    return docs


def parse_queries(text: str) -> list[tuple[str, str, str]]:
    return [
        (str(position), rid, " ".join(fields.get(".W", "").split()))
        for position, (rid, fields) in enumerate(records(text), start=1)
    ]


def parse_qrels(text: str) -> tuple[list[tuple[str, str, int]], list[tuple[str, str]]]:
    qrels, source = [], []
    seen = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        qid, did, code = line.split()
        if (qid, did) in seen:
            raise SystemExit(f"cranqrel line {number}: repeated pair {qid} {did}")
        seen.add((qid, did))
        if int(code) == -1:
            source.append((qid, did))
        elif 1 <= int(code) <= 4:
            qrels.append((qid, did, 5 - int(code)))
        else:
            raise SystemExit(f"cranqrel line {number}: unexpected code {code}")
    return qrels, source


def gzip_bytes(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(data)
    return buffer.getvalue()


def serialise(docs, queries, qrels, source) -> dict[str, bytes]:
    docs_text = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    queries_text = "query_id\toriginal_id\ttext\n" + "".join(f"{q}\t{o}\t{t}\n" for q, o, t in queries)
    qrels_text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels)
    source_text = "query_id\tdoc_id\n" + "".join(f"{q}\t{d}\n" for q, d in source)
    return {
        "docs.jsonl": docs_text.encode("utf-8"),
        "queries.tsv": queries_text.encode("utf-8"),
        "qrels.txt": qrels_text.encode("utf-8"),
        "source_docs.tsv": source_text.encode("utf-8"),
    }


def compare(built: dict[str, bytes], other: Path) -> None:
    for name, data in built.items():
        path = other / name
        if not path.exists() and (other / (name + ".gz")).exists():
            path = other / (name + ".gz")
        theirs = path.read_bytes()
        if path.suffix == ".gz":
            theirs = gzip.decompress(theirs)
        if name == "docs.jsonl":
            same = [json.loads(x) for x in data.decode().splitlines()] == [json.loads(x) for x in theirs.decode().splitlines()]
        else:
            same = data == theirs
        print(f"compare {name}: {'identical' if same else 'DIFFERENT'}")
        if not same:
            raise SystemExit(f"{name} differs from {path}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="folder with the four original files")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--compare", type=Path, help="folder with another derivation to compare with")
    args = parser.parse_args(argv)

    for name in MD5:
        read_original(args.source, name)  # checks every checksum, the readme included
    docs = parse_docs(read_original(args.source, "cran.all.1400"))
    queries = parse_queries(read_original(args.source, "cran.qry"))
    qrels, source = parse_qrels(read_original(args.source, "cranqrel"))

    built = serialise(docs, queries, qrels, source)
    if args.compare:
        compare(built, args.compare)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "docs.jsonl.gz").write_bytes(gzip_bytes(built["docs.jsonl"]))
    for name in ("queries.tsv", "qrels.txt", "source_docs.tsv"):
        (args.out / name).write_bytes(built[name])

    # the statistics PROVENANCE.md reports
    grades = Counter(g for _, _, g in qrels)
    per_topic = Counter(q for q, _, _ in qrels)
    words = sorted(len(d["text"].split()) for d in docs)
    print(f"documents: {len(docs)}; words per text: min {words[0]}, median {words[len(words) // 2]}, max {words[-1]}; "
          f"empty texts: {[d['doc_id'] for d in docs if not d['text']]}")
    print(f"queries: {len(queries)}; qrels: {len(qrels)} judgments over {len(per_topic)} topics; "
          f"grades {dict(sorted(grades.items()))}; relevant per topic min {min(per_topic.values())}, "
          f"max {max(per_topic.values())}; source pairs: {len(source)}")
    for name in ("docs.jsonl.gz", "queries.tsv", "qrels.txt", "source_docs.tsv"):
        data = (args.out / name).read_bytes()
        print(f"{name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    sys.exit(main())
