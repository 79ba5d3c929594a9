"""Downloadable full collections: manifests, checksums, cache and the real download path.

The download path is exercised over HTTP: the evaluation data kept beside the repository
(``../shared/data``, laid out like a mirror) is served from a local server on 127.0.0.1 and
read through ``mirror=``. Those tests skip where that folder is absent; the checks of the
manifests, the checksum and the error messages always run.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import threading
from pathlib import Path

import pandas as pd
import pytest

import pdeval
from pdeval.datasets import remote
from pdeval.errors import PdevalError
from locations import REPO

SHARED = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"the project's shared data is not at {SHARED} (../shared/data from the repository root)",
)


@pytest.fixture()
def http_mirror():
    """``../shared/data`` served over HTTP on 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(SHARED))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


def test_git_blob_sha1_is_gits_identifier():
    # git's identifiers of the empty file and of "hello\n" (`git hash-object`), well known
    assert remote.git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert remote.git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


@pytest.mark.parametrize("name", ["clef2015", "clef2016", "clef2018-full", "trec-dl21"])
def test_manifests_name_runs_and_qrels_at_pinned_commits(name):
    entries = remote.manifest(name)
    roles = pd.Series([e.role for e in entries]).value_counts()
    expected_runs = {"clef2015": 68, "clef2016": 16, "clef2018-full": 24, "trec-dl21": 63}[name]
    assert roles["runs"] == expected_runs and roles["qrels"] == 1
    for entry in entries:
        assert len(entry.git_blob_sha1) == 40 and entry.size > 0
        url = entry.source_url()
        assert url.startswith("https://") and " " not in url
        assert len(url.split("/")[5]) == 40  # a commit, not a branch


def test_the_stated_download_sizes_are_the_manifests():
    import re

    stated = dict(re.findall(r"``([a-z0-9-]+)`` \([^)]*?(\d+) MB", " ".join(pdeval.datasets.__doc__.split())))
    assert sorted(stated) == ["clef2015", "clef2016", "clef2018-full", "trec-dl21"]
    for name, megabytes in stated.items():
        assert round(remote.download_size(name) / 1e6) == int(megabytes), name
    assert remote.download_size("trec-dl21") == 208_960_238


def test_names_lists_the_sample_and_the_full_collections():
    assert pdeval.datasets.names() == ["clef2015", "clef2016", "clef2018", "clef2018-full", "trec-dl21"]


def test_a_damaged_copy_is_refused_and_not_cached(tmp_path):
    entry = next(e for e in remote.manifest("clef2016") if e.role == "qrels")
    mirror = tmp_path / "mirror"
    (mirror / entry.local_path).parent.mkdir(parents=True)
    (mirror / entry.local_path).write_bytes(b"1 0 doc 1\n")
    with pytest.raises(PdevalError, match=entry.git_blob_sha1) as caught:
        remote.fetch("clef2016", mirror=str(mirror), cache_dir=tmp_path / "cache", progress=False)
    assert "nothing was cached" in str(caught.value)
    assert not (tmp_path / "cache" / entry.local_path).exists()


def test_a_truncated_download_is_refused_naming_it(tmp_path):
    """Issue: datasets.load on a truncated download raised a raw EOFError."""
    import gzip

    entry = next(e for e in remote.manifest("clef2016") if e.role == "qrels")
    mirror = tmp_path / "mirror"
    (mirror / entry.local_path).parent.mkdir(parents=True)
    whole = gzip.compress(b"1 0 doc 1\n" * 1000)
    (mirror / entry.local_path).write_bytes(whole[: len(whole) // 2])
    with pytest.raises(PdevalError, match=r"truncated or damaged gzip file.*nothing was cached") as caught:
        pdeval.datasets.load("clef2016", mirror=str(mirror), cache_dir=tmp_path / "cache", progress=False)
    assert entry.local_path in str(caught.value)
    assert not (tmp_path / "cache" / entry.local_path).exists()


def test_an_unreachable_source_names_it_and_the_remedy(tmp_path):
    with pytest.raises(PdevalError, match=r"could not download http://127\.0\.0\.1:9/.*PDEVAL_DATA_MIRROR"):
        remote.fetch("clef2016", mirror="http://127.0.0.1:9", cache_dir=tmp_path, progress=False)


def test_unknown_name_suggests_close_ones():
    with pytest.raises(PdevalError, match="clef2015"):
        pdeval.datasets.load("clef2051")


@needs_shared
def test_download_over_http_verifies_caches_and_reads_like_the_files(tmp_path, http_mirror):
    cache = tmp_path / "cache"
    data = pdeval.datasets.load("clef2016", mirror=http_mirror, cache_dir=cache, progress=False)
    direct_runs = pdeval.read_run(sorted((SHARED / "clef2016-chs-task2" / "runs").iterdir()))
    direct_qrels = pdeval.read_qrels(SHARED / "clef2016-chs-task2" / "qrels.txt")
    pd.testing.assert_frame_equal(data.runs, direct_runs)
    pd.testing.assert_frame_equal(data.qrels, direct_qrels)
    assert data.runs["run"].nunique() == 16 and data.partial_qrels is None
    # cached files are the originals (gzip-compressed where the name says .gz)
    for entry in remote.manifest("clef2016"):
        raw = (cache / entry.local_path).read_bytes()
        original = gzip.decompress(raw) if entry.local_path.endswith(".gz") else raw
        assert remote.git_blob_sha1(original) == entry.git_blob_sha1
    # a second load reads the cache: no source is needed any more
    again = pdeval.datasets.load("clef2016", mirror="http://127.0.0.1:9", cache_dir=cache, progress=False)
    pd.testing.assert_frame_equal(again.runs, data.runs)
    remote.remove("clef2016", cache_dir=cache)
    assert not any(cache.iterdir())


@needs_shared
def test_mirror_directory_and_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("PDEVAL_DATA_MIRROR", str(SHARED))
    monkeypatch.setenv("PDEVAL_CACHE", str(tmp_path))
    paths = remote.fetch("clef2018-full", progress=False)
    assert paths["partial_qrels"][0] == tmp_path / "clef2018-chs-task1" / "aux" / "qrels_partial_20180911.txt"
    assert len(paths["runs"]) == 24 and all(p.exists() for p in paths["runs"])


def test_a_cache_folder_that_cannot_be_written_is_named_with_the_remedy(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(PdevalError, match="cannot write to the cache folder.*cache_dir="):
        remote.fetch("clef2016", cache_dir=blocker, mirror=str(tmp_path / "empty mirror"), progress=False)
