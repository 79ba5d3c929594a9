"""Integer keys of id columns: packed words keep byte order and equality, encodings are exact,
and the engine gives the same values whichever keys it uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
import pdeval.engine.index
import pdeval.engine.ranked
from pdeval.errors import DuplicateError
from pdeval.engine.ids import MAX_PACKED_BYTES, encode, fingerprint, packed_ids

# ids as collections write them, plus multi-byte UTF-8 and lengths around the word size
ID_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)


def arrow_series(values, chunk_size=None):
    """An Arrow-backed string column, optionally split into sliced chunks of one buffer."""
    array = pa.array(values, type=pa.large_string())
    if chunk_size:
        array = pa.chunked_array([array.slice(i, chunk_size) for i in range(0, len(values), chunk_size)])
    return pd.Series(pd.arrays.ArrowStringArray(array))


@settings(max_examples=200, deadline=None)
@given(st.lists(ID_TEXT, min_size=1, max_size=100), st.sampled_from([None, 1, 7]))  # chunk size 1: up to 100 chunks
def test_packed_words_compare_like_the_utf8_bytes(ids, chunk_size):
    words = packed_ids(arrow_series(ids, chunk_size))
    encoded = [i.encode("utf-8") for i in ids]
    if max(map(len, encoded)) > MAX_PACKED_BYTES:
        assert words is None
        return
    assert words.shape == (len(ids), max(1, -(-max(map(len, encoded)) // 8)))
    rows = [tuple(row) for row in words.tolist()]
    for a in range(len(ids)):
        for b in range(len(ids)):
            assert (rows[a] == rows[b]) == (encoded[a] == encoded[b])
            assert (rows[a] < rows[b]) == (encoded[a] < encoded[b])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, MAX_PACKED_BYTES),
    st.lists(st.text(alphabet="abc-09", min_size=48, max_size=48), min_size=1, max_size=60),
    st.sampled_from([None, 1, 7]),
    st.data(),
)
def test_packed_words_of_ids_of_one_width_and_picked_rows(width, texts, chunk_size, data):
    # ids of one byte width take a path of their own (each word a strided view of the data),
    # and ``rows`` packs only some ids: both must give the words of the ids themselves
    # ASCII ids of ``width`` bytes; where one starts with "a", a two-byte character for two
    ids = [("\u00e9" + t[2:width]) if t[0] == "a" and width >= 2 else t[:width] for t in texts]
    if chunk_size == 7 and len(ids) > 3:  # a chunk of other widths next to ones of one width
        ids[0] = ids[0][: max(1, width // 2)]
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(ids) - 1)))), dtype=np.int64)
    series = arrow_series(ids, chunk_size)

    def words_of(values):  # big-endian words of the zero-padded UTF-8 bytes, by hand
        encoded = [v.encode("utf-8") for v in values]
        n_words = max(1, -(-max(map(len, encoded), default=0) // 8))
        padded = [e.ljust(8 * n_words, b"\0") for e in encoded]
        return np.array(
            [[int.from_bytes(p[8 * w : 8 * w + 8], "big") for w in range(n_words)] for p in padded], dtype=np.uint64
        ).reshape(len(values), n_words)

    assert np.array_equal(packed_ids(series), words_of(ids))
    assert np.array_equal(packed_ids(series, rows), words_of([ids[r] for r in rows]))


def test_ids_that_cannot_be_packed_are_declined():
    assert packed_ids(arrow_series(["a", "a\x00"])) is None  # NUL padding would make them equal
    assert packed_ids(arrow_series(["x" * (MAX_PACKED_BYTES + 1)])) is None
    assert packed_ids(pd.Series(["a", "b"], dtype=object)) is None
    assert packed_ids(pd.Series(["a", "b"], dtype="category")) is None
    assert packed_ids(pd.Series(pd.array(["a", None], dtype="str"))) is None


def test_fingerprints_do_not_depend_on_padding_and_separate_salts():
    words = packed_ids(arrow_series(["LA010189-0001", "d12", "", "FBIS3-10082"]))
    assert words.shape[1] == 2
    wide = np.hstack([words, np.zeros((4, 2), dtype=np.uint64)])
    assert (fingerprint(wide) == fingerprint(words)).all()
    salt = np.array([0, 1, 2, 3])
    assert (fingerprint(wide, salt=salt) == fingerprint(words, salt=salt)).all()
    assert len(set(fingerprint(words).tolist())) == 4
    assert (fingerprint(words, salt=salt) != fingerprint(words, salt=salt + 1)).all()


def test_one_word_ids_have_distinct_fingerprints():
    ids = [f"d{i}" for i in range(200_000)] + [str(i) for i in range(200_000)]
    prints = fingerprint(packed_ids(arrow_series(ids)))
    assert len(np.unique(prints)) == len(ids)


@pytest.mark.parametrize("blocky", [True, False])
def test_encode_gives_codes_of_the_values(blocky):
    rng = np.random.default_rng(3)
    names = np.array([f"run{i}" for i in range(40)])
    values = np.repeat(names, 100) if blocky else rng.choice(names, 4000)
    for series in (arrow_series(list(values), chunk_size=333), pd.Series(values, dtype=object)):
        codes, uniques = encode(series)
        assert list(np.asarray(uniques, dtype=object)[codes]) == list(values)
        assert uniques.is_unique


def random_run_and_qrels(seed, id_length):
    """Lists with many tied scores and ids of mixed lengths, some ids shared with the qrels."""
    rng = np.random.default_rng(seed)
    pool = np.array(sorted({"d" + "7" * int(rng.integers(0, id_length)) + str(i) for i in range(400)}))
    rows, judged = [], []
    for topic in ["1", "2", "10"]:
        docs = rng.choice(pool, 120, replace=False)
        judged += [(topic, doc, int(rng.integers(-1, 3))) for doc in docs[:60] if rng.random() < 0.7]
        for run in ["a", "b"]:
            retrieved = rng.choice(docs, 80, replace=False)
            rows += [(run, topic, doc, float(rng.integers(0, 8))) for doc in retrieved]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


MEASURES = ["AP", "P@10", "nDCG", "Bpref", "infAP", "RR", "AP'", "rpref_N", "RankEff"]


@pytest.mark.parametrize("id_length", [5, 20, 40])  # one word, several words, too long to pack
def test_packed_and_encoded_doc_ids_give_the_same_values(id_length):
    run, qrels = random_run_and_qrels(id_length, id_length)
    packed = pdeval.evaluate(run, qrels, MEASURES)
    as_categories = pdeval.evaluate(run.astype({"doc_id": "category"}), qrels, MEASURES)
    pd.testing.assert_frame_equal(packed, as_categories)
    # the tie order is trec_eval's: doc id descending, as a Python sort of the strings gives
    ranked = pdeval.rank_run(run)
    ranked_by_python = run.sort_values(["run", "query_id", "score", "doc_id"], ascending=[True, True, False, False])
    assert list(ranked["doc_id"]) == list(ranked_by_python["doc_id"])


def test_fingerprint_collisions_fall_back_to_exact_codes(monkeypatch):
    run, qrels = random_run_and_qrels(1, 5)
    expected = pdeval.evaluate(run, qrels, MEASURES)

    def colliding(words, salt=None):
        return np.zeros(len(words), dtype=np.uint64)

    for module in (pdeval.engine.index, pdeval.engine.ranked):
        monkeypatch.setattr(module, "fingerprint", colliding)
    pd.testing.assert_frame_equal(pdeval.evaluate(run, qrels, MEASURES), expected)
    with pytest.raises(DuplicateError):
        pdeval.evaluate(pd.concat([run, run.head(1)]), qrels, MEASURES)


def test_duplicate_documents_are_found_on_packed_ids():
    run, qrels = random_run_and_qrels(2, 5)
    repeated = pd.concat([run, run.iloc[[5]].assign(score=-1.0)], ignore_index=True)
    with pytest.raises(DuplicateError):
        pdeval.evaluate(repeated, qrels, ["AP"])


def test_a_doc_lookup_is_confirmed_on_the_ids_not_their_fingerprints(monkeypatch):
    # a fingerprint of the first word only makes "abcdefgh2" collide with the judged "abcdefgh1"
    def first_word(words, salt=None):
        return words[:, 0] + (np.uint64(0) if salt is None else salt.astype(np.uint64))

    for module in (pdeval.engine.index, pdeval.engine.ranked):
        monkeypatch.setattr(module, "fingerprint", first_word)
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["abcdefgh1", "x"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["abcdefgh2", "x"], "score": [2.0, 1.0]})
    result = pdeval.evaluate(run, qrels, ["AP", "NumRelRet", "Judged@2"])
    assert result.set_index("measure")["value"].to_dict() == {"AP": 0.0, "NumRelRet": 0.0, "Judged@2": 0.5}


def test_take_sorted_equals_arrows_take_without_joining_the_chunks():
    import pyarrow as pa

    from pdeval.common.arrow import take_sorted

    rng = np.random.default_rng(3)
    chunks = [pa.array([f"id{i}-{j}" for j in range(int(n))], type=pa.large_string())
              for i, n in enumerate(rng.integers(0, 40, 25))]
    column = pa.chunked_array(chunks)
    for size in (0, 1, 7, 200):
        rows = np.sort(rng.choice(len(column), size=min(size, len(column)), replace=True))
        assert take_sorted(chunks, rows).to_pylist() == column.take(pa.array(rows, type=pa.int64())).to_pylist()
