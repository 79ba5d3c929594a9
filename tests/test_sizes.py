"""The size rules of the architecture guide, as tests: a module under 600 lines, a function under
100 lines, and no block of six code lines written twice in the package (docstrings, whose
examples may share a setup, do not count).

Functions that were longer when the rule became a test are listed in :data:`LONGER` with their
length then: the list may only shrink (a listed function may not grow, and no other may pass
100 lines), so the rule ratchets instead of waiting for one large rewrite.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pdeval"
MODULE_LINES = 600
FUNCTION_LINES = 100
BLOCK = 6

#: (module path under pdeval/, function) -> its length when the rule became a test; may only shrink
LONGER = {
    ('analysis/estimates/core.py', 'estimate'): 191,
    ('analysis/estimates/ppi.py', 'stratified_ppi_mean'): 104,
    ('analysis/judges/agreement.py', 'agreement'): 150,
    ('analysis/judges/holes.py', 'fill_holes'): 125,
    ('analysis/judges/labels.py', 'merge_qrels'): 130,
    ('analysis/pool_bias/leave_out.py', 'leave_out_pooling'): 178,
    ('analysis/rankings/correlation.py', 'rank_correlation'): 168,
    ('analysis/rankings/training.py', 'training_sensitivity'): 168,
    ('analysis/reproducibility/core.py', 'reproducibility'): 154,
    ('analysis/reproducibility/standardize.py', 'standardize'): 109,
    ('analysis/statistics/bootstrap.py', 'discriminative_power'): 109,
    ('analysis/statistics/significance.py', 'compare'): 155,
    ('analysis/statistics/swaps.py', 'swap_rates'): 151,
    ('analysis/statistics/topic_set_size.py', 'topic_set_size'): 109,
    ('analysis/statistics/tukey.py', 'tukey_hsd'): 141,
    ('evaluation/bounds.py', 'bounds'): 103,
    ('integrations/pyterrier.py', 'experiment'): 157,
    ('judgments/adjudication.py', 'judging_order'): 104,
    ('judgments/pooling.py', 'mixed_pool'): 107,
    ('judgments/pooling.py', 'pool'): 120,
    ('judgments/reduction.py', 'reduce'): 154,
    ('judgments/sampling.py', 'sample_pool'): 106,
    ('sources/sampled.py', 'prels_qrels'): 129,
}


def sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_modules_stay_under_600_lines():
    long = {name: len(text.splitlines()) for name, text in sources().items() if len(text.splitlines()) > MODULE_LINES}
    assert long == {}


def function_lengths() -> dict[tuple[str, str], int]:
    found = {}
    for name, text in sources().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[(name, node.name)] = max(found.get((name, node.name), 0), node.end_lineno - node.lineno + 1)
    return found


def test_functions_stay_under_100_lines_or_shrink():
    lengths = function_lengths()
    too_long = {key: n for key, n in lengths.items() if n > FUNCTION_LINES and n > LONGER.get(key, 0)}
    assert too_long == {}, f"over {FUNCTION_LINES} lines (or longer than listed in LONGER): {too_long}"
    stale = {key: n for key, n in LONGER.items() if lengths.get(key, 0) <= FUNCTION_LINES}
    assert stale == {}, f"now short enough: remove them from LONGER: {stale}"


def docstring_lines(text: str) -> set[int]:
    """The line numbers of the docstrings (documentation, whose Examples may share a setup)."""
    lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, stripped text) of the lines that count: code, not blanks, comments,
    docstrings, imports or lone brackets and quotes."""
    skip = {")", "]", "}", '"""', "),", "],", "})", "):"}
    docs = docstring_lines(text)
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1)
            if i not in docs and line.strip() and not line.strip().startswith(("#", "import ", "from "))
            and line.strip() not in skip]


def repeated_blocks(texts: dict[str, str]) -> list[list[tuple[str, int]]]:
    places = collections.defaultdict(set)
    for name, text in texts.items():
        lines = code_lines(text)
        for k in range(len(lines) - BLOCK + 1):
            places[tuple(t for _, t in lines[k:k + BLOCK])].add((name, lines[k][0]))
    return [sorted(where) for where in places.values() if len(where) > 1]


def test_no_block_of_six_lines_is_written_twice():
    assert repeated_blocks(sources()) == []


def test_a_repeated_block_is_found():
    block = "\n".join(f"x{i} = f(y{i})" for i in range(BLOCK))
    assert repeated_blocks({"a.py": block, "b.py": "z = 1\n" + block}) == [[("a.py", 1), ("b.py", 2)]]
