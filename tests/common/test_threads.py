"""Work done ahead in threads gives the results, warnings and first error of doing it in order."""

from __future__ import annotations

import threading
import time
import warnings

import pytest

import pdeval
import pdeval.common.threads
from pdeval.errors import ParseError


def test_ordered_keeps_item_order_bounds_the_work_ahead_and_raises_the_first_error(monkeypatch):
    monkeypatch.setattr(pdeval.common.threads, "THREADS", 3)
    running, most = [0], [0]
    lock = threading.Lock()

    def slow(i):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02 if i % 2 else 0.001)  # odd items finish last
        with lock:
            running[0] -= 1
        if i in (5, 7):
            raise ValueError(f"item {i}")
        return i * i

    got = []
    with pytest.raises(ValueError, match="item 5"):  # not item 7, even if it fails first
        for value in pdeval.common.threads.ordered(slow, range(20)):
            got.append(value)
    assert got == [i * i for i in range(5)]
    assert most[0] <= 3
    assert list(pdeval.common.threads.ordered(lambda i: -i, iter(range(50)))) == [-i for i in range(50)]


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_run_files_read_ahead_give_the_frame_warnings_and_error_of_one_after_the_other(tmp_path, monkeypatch, threads):
    monkeypatch.setattr(pdeval.common.threads, "THREADS", threads)
    for i in range(6):
        lines = [f"q{t} Q0 d{d} {d} {10 - d} tag" for t in range(3) for d in range(1, 6)]
        if i == 2:
            lines.insert(0, "# a comment")
        if i == 4:
            lines.append("q1 Q0 d1 9 0.5 tag")  # a repeated document
        (tmp_path / f"run{i}.txt").write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = pdeval.read_run(tmp_path, duplicates="first")
    assert run["run"].unique().tolist() == [f"run{i}" for i in range(6)]
    assert len(run) == 6 * 15
    ours = [w for w in caught if issubclass(w.category, pdeval.errors.PdevalWarning)]  # (not a socket another test left)
    assert [str(w.message).split(":")[0] for w in ours] == [str(tmp_path / "run2.txt"), str(tmp_path / "run4.txt")]
    (tmp_path / "run1.txt").write_text("q1 Q0 d1 1\n")  # malformed: the first error in file order
    (tmp_path / "run5.txt").write_text("")
    with pytest.raises(ParseError) as error:
        pdeval.read_run(tmp_path)
    assert error.value.path == str(tmp_path / "run1.txt") and error.value.line == 1
