"""The API conventions, checked over every public function and every ``df.ir`` method.

* ``df.ir.f`` is ``pdeval.f`` with the frame bound: the same name, docstring and signature
  minus the first parameter, for every public function whose first argument is a run,
  qrels or result frame.
* One name per concept: :data:`CONCEPTS` holds each concept's name and the synonyms that
  may not appear as a public parameter (``B``, ``permutations``, ``trials``, a singular
  ``measure``, ``method`` for a choice of correlation coefficients, ``path`` as a first
  argument, ``runs`` for the runs that built a pool, ``run_depth`` or ``max_depth`` for the
  engine's cut, ...).
* A ``depth`` parameter is always the engine's cut (trec_eval ``-M``, documented by
  :data:`~pdeval.engine.options.OPTION_DOCS`); the depth of a pool is ``pool_depth`` (a grid of
  them ``pool_depths``), so the two can never again share a name.
* The shared rules: ``progress: bool | None = None``, one validated ``seed``, integer resample
  counts refused otherwise with the parameter's name, first arguments named ``run``,
  ``qrels``, ``result`` or ``source``.
"""

from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.accessor import methods
from pdeval.analysis.rankings.coefficients import METHODS as COEFFICIENTS
from pdeval.engine.options import OPTION_DOCS
from pdeval.errors import PdevalError, SchemaError

FUNCTIONS = {
    name: getattr(pdeval, name)
    for name in pdeval.__all__
    if inspect.isfunction(getattr(pdeval, name))
}
BOUND = methods()

#: concept -> (its one parameter name, synonyms that may not be public parameter names)
CONCEPTS = {
    "resample count": ("n_resamples", {"B", "b_", "permutations", "n_permutations", "trials", "n_trials",
                                       "swap_trials", "replicates", "n_boot", "bootstrap", "resamples"}),
    "measures": ("measures", {"measure", "metric", "metrics", "eval_metrics"}),
    "correlation coefficients": ("methods", {"coefficient", "coefficients", "statistic", "statistics"}),
    "random seed": ("seed", {"random_state", "rng", "random_seed", "generator"}),
    "progress bar": ("progress", {"show_progress", "verbose", "progress_bar", "tqdm", "quiet"}),
    "runs that built the pool": ("pooled", {"runs", "pool_runs", "pooled_runs", "contributors", "pool_by"}),
    "pool depth": ("pool_depth", {"pooling_depth", "pool_k", "k_pool", "judging_depth", "candidate_depth"}),
    "pool depths (a grid)": ("pool_depths", {"depths", "pooling_depths", "pool_ks"}),
    "engine cut (trec_eval -M)": ("depth", {"run_depth", "max_depth", "rank_depth", "ranking_depth",
                                            "cut_depth", "max_rank", "max_num_docs", "max_docs", "cutoff"}),
    "systems compared against": ("baseline", {"baselines", "base", "control", "controls", "reference_run"}),
    "an interval's coverage": ("confidence", {"confidence_level", "ci_level", "coverage", "conf"}),
    "the unit of an estimate": ("per", {"level", "unit", "granularity"}),
    "a value filled in": ("fill_value", {"fill", "missing_value", "na_value", "default_value"}),
}
#: (function, parameter) pairs where a synonym is the right word: parse_measure parses one measure;
#: experiment's first argument is PyTerrier's ``runs`` (the systems to compare, not a pool)
SYNONYM_EXCEPTIONS = {("parse_measure", "measure"), ("experiment", "runs")}

#: the names a first argument may have (a frame, or anything read from files)
FIRST_ARGUMENTS = {"run", "qrels", "result", "source"}
#: functions whose first argument is something else, and why
FIRST_ARGUMENT_EXCEPTIONS = {
    "available_measures": "takes no argument",
    "parse_measure": "a measure string",
    "from_ranx": "a ranx object",
    "to_ranx": "a run or a qrels frame (frame)",
    "write_table": "a run, qrels or result frame (frame)",
    "label_sets": "a mapping name -> qrels frame, or one qrels frame (sets)",
    "prels_qrels": "statAP prels (prels)",
    "experiment": "PyTerrier's runs: a run frame, a list of them or a result frame (runs)",
    "write_zscores": "a z-score table of zscore_table (table), not a result frame",
    "budget_qrels": "a judging order of judging_order (order)",
}
#: functions whose first argument is named like a frame but that are no df.ir method, and why
NO_METHOD: dict = {}


def parameters(function) -> list[inspect.Parameter]:
    return list(inspect.signature(function).parameters.values())


def test_every_function_whose_first_argument_is_a_frame_has_its_method():
    frames = {"run", "qrels", "result"}
    missing = [name for name, function in FUNCTIONS.items()
               if parameters(function) and parameters(function)[0].name in frames and name not in BOUND
               and name not in NO_METHOD]
    assert missing == []
    assert sorted(set(BOUND) - set(FUNCTIONS)) == []  # every method is a public function


@pytest.mark.parametrize("name", sorted(BOUND))
def test_the_method_is_the_function_with_the_frame_bound(name):
    function, _ = BOUND[name]
    method = getattr(pd.DataFrame().ir, name)
    expected = inspect.signature(function)
    expected = expected.replace(parameters=list(expected.parameters.values())[1:])
    assert inspect.signature(method) == expected
    assert method.__doc__ == function.__doc__ and method.__doc__
    assert method.__name__ == function.__name__ == name


@pytest.mark.parametrize("name", sorted(BOUND))
def test_a_method_refuses_a_frame_of_the_wrong_kind(name):
    _, kinds = BOUND[name]
    if kinds == ("any",):
        return
    wrong = pd.DataFrame({"x": [1]})
    with pytest.raises(SchemaError, match=rf"\.ir\.{name} needs a {kinds[0]} frame"):
        getattr(wrong.ir, name)()


def test_help_on_the_evaluate_method_shows_every_option_with_its_default():
    text = pydoc.render_doc(pd.DataFrame().ir.evaluate, renderer=pydoc.plaintext)
    signature = inspect.signature(pdeval.evaluate)
    for option in OPTION_DOCS:
        default = signature.parameters[option].default
        assert f"{option}: " in text or f"{option}=" in text, option
        assert f"= {default!r}" in text or f"={default!r}" in text, option
        assert f"{option} : " in text, option  # documented in the Parameters section


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_one_name_per_concept(name):
    for parameter in parameters(FUNCTIONS[name]):
        for concept, (right, synonyms) in CONCEPTS.items():
            if parameter.name in synonyms and (name, parameter.name) not in SYNONYM_EXCEPTIONS:
                pytest.fail(f"{name}({parameter.name}=...) names the {concept}: call it {right}")


def parameter_entry(doc: str, name: str) -> str:
    """The text of ``name``'s entry in a numpydoc Parameters section (whitespace collapsed), or
    '' when it has none; an entry may document several names (``run, qrels : DataFrame``)."""
    lines = doc.expandtabs().splitlines()
    for i, line in enumerate(lines):
        header = line.strip().split(" : ")[0]
        if name not in [part.strip() for part in header.split(",")] or i == 0:
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following.strip())
        return " ".join(" ".join(body).split())
    return ""


ENGINE_DEPTH = " ".join(OPTION_DOCS["depth"][1].split())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_depth_parameter_is_the_engines_cut(name):
    """``depth`` means one thing: the engine's cut (trec_eval ``-M``); a function whose
    ``depth`` is a pool's calls it ``pool_depth``."""
    function = FUNCTIONS[name]
    if "depth" not in inspect.signature(function).parameters:
        return
    entry = parameter_entry(function.__doc__ or "", "depth")
    assert ENGINE_DEPTH.lower() in entry.lower(), (
        f"{name}(depth=...) is documented as {entry!r}: depth is the engine's cut "
        f"({ENGINE_DEPTH!r}, as @takes_engine_options documents it); a pool depth is pool_depth"
    )


@pytest.mark.parametrize("name", sorted(BOUND))
def test_a_methods_depth_is_the_engines_cut(name):
    method = getattr(pd.DataFrame().ir, name)
    if "depth" in inspect.signature(method).parameters:
        assert ENGINE_DEPTH.lower() in parameter_entry(method.__doc__, "depth").lower(), name


def test_pool_functions_name_the_pool_by_one_word():
    """Every public function that builds or reads a pool takes its runs as ``pooled`` and its
    depth as ``pool_depth`` (``pool_depths`` for a grid)."""
    pooled = {"pool", "mixed_pool", "sample_inclusion", "sample_pool", "leave_out_bias",
              "pool_bias_correction", "estimate", "unique_factors"}
    pool_depth = {"pool", "leave_out_pooling", "leave_out_bias", "pool_bias_correction", "judging_order",
                  "fill_holes", "sample_inclusion", "estimate", "unique_factors"}
    for name in sorted(pooled):
        assert "pooled" in inspect.signature(FUNCTIONS[name]).parameters, name
    for name in sorted(pool_depth):
        assert "pool_depth" in inspect.signature(FUNCTIONS[name]).parameters, name
    assert "pool_depths" in inspect.signature(FUNCTIONS["mixed_pool"]).parameters


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_choice_of_coefficients_is_methods(name):
    for parameter in parameters(FUNCTIONS[name]):
        default = parameter.default
        values = [default] if isinstance(default, str) else list(default) if isinstance(default, (tuple, list)) else []
        if values and all(v in COEFFICIENTS for v in values):
            assert parameter.name == "methods", f"{name}({parameter.name}=...) chooses coefficients: call it methods"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_first_argument_names(name):
    params = parameters(FUNCTIONS[name])
    if name in FIRST_ARGUMENT_EXCEPTIONS:
        assert not params or params[0].name not in ("path",), name
        return
    assert params[0].name in FIRST_ARGUMENTS, f"{name}({params[0].name}, ...): name it one of {FIRST_ARGUMENTS}"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_progress_and_seed_follow_one_rule(name):
    for parameter in parameters(FUNCTIONS[name]):
        if parameter.name == "progress":
            assert parameter.default is None, f"{name}(progress={parameter.default!r}): the default is None"
        if parameter.name == "seed":
            assert parameter.default == 0, f"{name}(seed={parameter.default!r})"
        if parameter.name == "n_resamples":
            assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name


def test_run_then_qrels():
    for name, function in FUNCTIONS.items():
        names = [p.name for p in parameters(function)]
        if "run" in names and "qrels" in names:
            assert names.index("run") < names.index("qrels"), name


def test_rank_run_takes_by_none():
    assert inspect.signature(pdeval.rank_run).parameters["by"].default is None


def _result(m: int = 3, n: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame([{"run": f"r{i}", "query_id": f"q{j}", "measure": "AP", "value": rng.random()}
                         for i in range(m) for j in range(n)])


RESAMPLING = {
    "discriminative_power": lambda r, **o: pdeval.discriminative_power(r, **o),
    "swap_rates": lambda r, **o: pdeval.swap_rates(r, c=2, **o),
    "tukey_hsd": lambda r, **o: pdeval.tukey_hsd(r, **o),
    "compare": lambda r, **o: pdeval.compare(r, test="bootstrap", **o),
}


@pytest.mark.parametrize("name", sorted(RESAMPLING))
@pytest.mark.parametrize("bad", [2.5, "10", True, 0])
def test_resample_counts_are_integers(name, bad):
    with pytest.raises(PdevalError, match=rf"{name}\(\): n_resamples={bad!r} is not .*an integer >= 1"):
        RESAMPLING[name](_result(), n_resamples=bad, progress=False)


@pytest.mark.parametrize("name", sorted(RESAMPLING))
def test_seed_is_an_int_none_or_a_generator(name):
    call = RESAMPLING[name]
    a = call(_result(), n_resamples=20, seed=7, progress=False)
    b = call(_result(), n_resamples=20, seed=np.random.default_rng(7), progress=False)
    call(_result(), n_resamples=20, seed=None, progress=False)
    assert isinstance(a, pd.DataFrame) and isinstance(b, type(a))
    pd.testing.assert_frame_equal(a, b)
    for bad in (-1, 1.5, "x", True):
        with pytest.raises(PdevalError, match=rf"{name}\(\): seed={bad!r} is not None or an integer >= 0 or a numpy"):
            call(_result(), n_resamples=20, seed=bad, progress=False)


@pytest.mark.parametrize("name", sorted(RESAMPLING))
def test_progress_is_a_bool_or_none(name):
    with pytest.raises(PdevalError, match=rf"{name}\(\): progress='yes' is not None or True or False"):
        RESAMPLING[name](_result(), n_resamples=20, progress="yes")


def test_judgment_draws_take_the_same_seed():
    qrels = pd.DataFrame({"query_id": ["q"] * 30, "doc_id": [f"d{i}" for i in range(30)],
                          "relevance": [1] * 5 + [0] * 25})
    assert len(pdeval.reduce(qrels, [50], seed=None)) == 30
    a = pdeval.reduce(qrels, [50], seed=np.random.default_rng(3))
    b = pdeval.reduce(qrels, [50], seed=np.random.default_rng(3))
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(PdevalError, match=r"reduce\(\): seed=-2 is not None or an integer >= 0 or a numpy.random.Generator"):
        pdeval.reduce(qrels, [50], seed=-2)


def test_fill_holes_refuses_a_bool_depth():
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["e"], "relevance": [1]})
    with pytest.raises(PdevalError, match=r"fill_holes\(\): pool_depth=True is not an integer >= 1"):
        pdeval.fill_holes(run, qrels, lambda batch: [0] * len(batch), pool_depth=True)


def test_result_bundles_show_their_summary_table():
    result = pd.concat([_result().assign(measure=m) for m in ("AP", "P@10")], ignore_index=True)
    qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "relevance": [0, 1, 2, 1]})
    frames = {
        "anova": (pdeval.anova(result), "effect_sizes"),
        "swap_rates": (pdeval.swap_rates(result, c=2, n_resamples=10, progress=False), "bins"),
        "discriminative_power": (pdeval.discriminative_power(result, n_resamples=10, progress=False), "pairs"),
        "agreement": (pdeval.agreement(qrels, {"x": qrels.assign(relevance=[0, 1, 1, 1])}), "statistics"),
    }
    for name, (frame, view) in frames.items():  # a DataFrame (its summary table) carrying its other frames
        assert isinstance(frame, pd.DataFrame) and len(frame), name
        assert isinstance(getattr(frame, view), pd.DataFrame) and view in frame.views(), name
        for derived in (frame.sort_values(frame.columns[0]), frame.head(1), pd.concat([frame, frame])):
            assert type(derived) is pd.DataFrame, name
    bundles = [frames["agreement"][0].bundle]
    for bundle in bundles:
        table = bundle.to_frame()
        assert isinstance(table, pd.DataFrame) and len(table)
        text = repr(bundle)
        assert text.startswith(type(bundle).__name__) and len(text.splitlines()) <= 2 + 12 + 3
        assert table.columns[-1] in text
        html = bundle._repr_html_()
        assert html.startswith(f"<p><b>{type(bundle).__name__}</b>") and "<table" in html
        assert all(isinstance(frame, pd.DataFrame) for frame in bundle.to_dict().values())


def _domains(domain):
    """A domain and every domain inside it (containers, alternatives)."""
    yield domain
    for inner in [getattr(domain, name, None) for name in ("domain", "item", "keys", "values")] + list(
            getattr(domain, "domains", ())):
        if inner is not None and hasattr(inner, "convert"):
            yield from _domains(inner)


def _contracts():
    from pdeval.common.contract import contract_of

    for name, function in sorted(FUNCTIONS.items()):
        spec = contract_of(function)
        if spec is not None:
            yield name, spec


def test_the_policy_word_that_stops_is_error():
    """A policy's value that raises is ``'error'`` everywhere: no declared choice offers ``'raise'``
    (an old call with it fails naming ``'error'``: the ``renamed`` words do not count)."""
    from pdeval.common.contract import Choice

    offending = [f"{name}({parameter}=)" for name, spec in _contracts() for parameter, domain in spec.domains.items()
                 for inner in _domains(domain) if isinstance(inner, Choice) and "raise" in inner.values]
    assert offending == []


def test_a_measure_parameter_is_named_for_measures():
    """A parameter whose domain is a measure is ``measures`` (or ``..._measure``), never
    ``baseline`` or ``reference``, whose meanings are runs and objects of the compared kind."""
    from pdeval.measures.domains import Measures

    offending = [f"{name}({parameter}=)" for name, spec in _contracts() for parameter, domain in spec.domains.items()
                 if any(isinstance(inner, Measures) for inner in _domains(domain))
                 and not (parameter in ("measures", "measure") or parameter.endswith("_measure"))]
    assert offending == []


#: public functions that compute no table: writers return where they wrote, converters another library's objects
NOT_TABLES = {"parse_measure": "parses one measure name", "to_ranx": "converts to ranx's objects"}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_that_computes_returns_a_dataframe(name):
    """Frames out: sort_values, indexing and pd.concat work on every result (a DataFrame subclass
    may carry extra views); annotations are the declaration, the doctests run each function."""
    if name.startswith("write_") or name in NOT_TABLES:
        return
    function = inspect.unwrap(FUNCTIONS[name])
    returned = inspect.signature(function).return_annotation
    if isinstance(returned, str):  # postponed annotations: read in the function's module
        returned = eval(returned, vars(inspect.getmodule(function)))  # noqa: S307 (the package's own annotations)
    assert isinstance(returned, type) and issubclass(returned, pd.DataFrame), f"{name}() -> {returned}: frames out"
