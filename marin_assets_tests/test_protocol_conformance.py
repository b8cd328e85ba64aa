"""Every registered implementation of every extension protocol takes the calls the platform makes.

Two layers: each protocol method of each implementation accepts every argument its protocol
declares (positionally and by name), and the protocol declares what the platform passes (the law
fitter's `form.starts(..., grid)`); then every law form runs through the fitter's own calls, every
format through the cleaner's read and count, every quality filter (FILTERS) alone through
`run_filters`, and every curation step (curation.STEPS) built, pickled and run as the cleaning job does.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from marin_assets.data.extract.extractors.base import EXTRACTORS, Extractor
from marin_assets.data.dedup.hash_families import HashFamily, family_names, hash_family
from marin_assets.scaling.laws import LAWS, law_from_params
from marin_assets.scaling.laws.base import LawForm


def _protocol_methods(protocol) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in vars(protocol).items()
            if inspect.isfunction(member) and not name.startswith("_")}


def _implementations():
    import marin_assets.data.extract.extractors  # noqa: F401 (the extractors register on import)

    yield from ((LawForm, f"law form {name}", form) for name, form in LAWS.items())
    yield from ((Extractor, f"extractor {kind}", cls) for kind, cls in EXTRACTORS.items())
    yield from ((HashFamily, f"hash family {name}", hash_family(name)) for name in family_names())


@pytest.mark.parametrize("protocol, label, impl", list(_implementations()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_implementation_accepts_what_its_protocol_declares(protocol, label, impl):
    for name, declared in _protocol_methods(protocol).items():
        assert hasattr(impl, name), f"{label} has no {name}"
        method = getattr(impl, name)
        params = [p for p in declared.parameters.values() if p.name != "self"]
        actual = inspect.signature(method)
        if inspect.isclass(impl):  # a registered class: its methods take self first
            actual = actual.replace(parameters=list(actual.parameters.values())[1:])
        try:
            actual.bind(*params)
            actual.bind(**{p.name: p for p in params})
        except TypeError as exc:
            pytest.fail(f"{label}.{name}{actual} does not take the protocol's {name}{declared}: {exc}")


def test_the_law_form_protocol_declares_the_call_the_fitter_makes():
    """parametric._fit_logs calls form.starts(features, log_l, weights, delta, top_k, grid)."""
    inspect.signature(LawForm.starts).bind(None, (), np.ones(2), np.ones(2), 1e-3, 5, np.ones((1, 5)))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_every_law_form_fits_predicts_and_round_trips_through_the_platform_calls(name):
    """fit_parametric (its starts with an explicit grid too), loss, compute_optimal, the stored fit -> law_from_params."""
    from marin_assets.scaling.parametric import fit_parametric
    from marin_assets_tests.scaling.synthetic import TRUE_LAW, isoflop_points

    points = isoflop_points(TRUE_LAW, budgets=(1e18, 1e19, 1e20), per_budget=5)
    N, D, L = points["N"].to_numpy(), points["D"].to_numpy(), points["loss"].to_numpy()
    covariates = {c: D / 2.0 for c in LAWS[name].covariates}  # e.g. U: every token seen twice
    grid = np.array([[np.log(400.0), np.log(1500.0), np.log(1.7), 0.34, 0.30]])
    fit = fit_parametric(N, D, L, method="huber", law=name, covariates=covariates, grid=grid, top_k=1)
    law = fit.law
    assert np.all(np.isfinite(law.loss(N, D)))
    n_opt, d_opt = law.compute_optimal(np.array([1e21]))
    assert np.all(np.isfinite(n_opt)) and np.all(np.isfinite(d_opt))
    again = law_from_params(fit.as_dict(), fit.context)  # a report stores the fit, its form named
    assert np.allclose(again.loss(N, D), law.loss(N, D))


def _formats():
    from marin_assets.data.formats.format_base import FORMATS

    return FORMATS.names()


@pytest.mark.parametrize("fmt", _formats(), ids=str)
@pytest.mark.parametrize("content", [b"", b"\x00 not this format at all\n\n{}\n"], ids=["empty", "garbage"])
def test_every_format_reads_what_its_counter_counts(fmt, content, tmp_path):
    """The calls the cleaning job makes per file: read_file (the registered reader) and count_records
    (the format's independent counter); on bad input too, every place the counter counts is yielded once."""
    from marin_assets.data.formats.records import IgnoredRecord, QuarantinedRecord, RawRecord
    from marin_assets.data.formats.readers import read_file
    from marin_assets.data.formats.record_counts import count_records
    from marin_assets.data.sources.source_registry import SourceSpec

    path = tmp_path / f"file.{fmt}"
    path.write_bytes(content)
    spec = SourceSpec(name="dirty_web", uri=str(path), format=fmt, license="CC0-1.0")
    records = list(read_file(str(path), spec, 1 << 20))
    assert all(isinstance(r, RawRecord | QuarantinedRecord | IgnoredRecord) for r in records)
    assert len(records) == count_records(str(path), spec), [getattr(r, "reason", None) for r in records]


# Texts that trip each filter and the curation steps somewhere, and degenerate ones (empty, one word).
PROBES = {
    "empty": "",
    "one_word": "word",
    "repeated_lines": "\n".join(["the same line again and again here"] * 40),
    "no_sentences": "\n".join(f"menu item {i}" for i in range(60)),
    "javascript": "Please enable javascript to view this page. " * 3,
    "prose": " ".join(f"The river {i} runs past the old mill, and the miller counts the sacks of grain."
                      for i in range(40)),
    "hashes_and_bullets": "\n".join(f"- # item {i} ..." for i in range(40)),
    "pii_and_eval_text": "Write to jane.doe@example.org or call +1 415 555 0100. "
                         "the quick brown fox jumps over the lazy dog near the quiet river bank today " * 2,
}


def _filter_names() -> list[str]:
    from marin_assets.data.clean.filters.filter_base import FILTERS

    return FILTERS.names()  # reflow (a FilterSettings field, not a filter) rewrites, never rejects


@pytest.mark.parametrize("name", _filter_names())
def test_every_filter_runs_alone_through_run_filters_and_names_its_rules(name):
    """The call the cleaner makes per document (cleaning_rows: run_filters(text, recipe.filters)), with only
    this filter on: a rejection is named "<filter>:<rule>", keeps the original text and carries the value
    that tripped it; at least one probe is rejected, so the filter really runs."""
    from marin_assets.data.clean.filters.pipeline import FilterOutcome, FilterSettings, run_filters

    from marin_assets.data.clean.filters.filter_base import FILTERS

    settings = FilterSettings(**{other: None for other in FILTERS.names() if other != name}, **{name: {}})
    rejected = []
    for label, text in PROBES.items():
        outcome = run_filters(text, settings)
        assert isinstance(outcome, FilterOutcome), f"{name} on {label}: {outcome!r}"
        if outcome.kept:
            continue
        rejected.append(label)
        assert outcome.reason.startswith(f"{name}:"), f"{name} on {label} rejected as {outcome.reason}"
        assert outcome.text == text, f"{name} on {label}: a rejected document keeps its original text"
        assert outcome.value is not None, f"{name} on {label}: rule {outcome.reason} reports no value"
    assert rejected, f"filter {name} rejected none of {sorted(PROBES)}"


@pytest.fixture(scope="module")
def curation_inputs():
    from marin_assets.data.curate import quality_classifier as qc
    from marin_assets.data.curate.curation_steps import CurationInputs
    from marin_assets.data.curate.decontaminate import build_index
    from marin_assets.data.curate.step_outcome import Value
    from marin_assets_tests.data.test_quality_classifier import RECIPE, _docs

    recipe_n = _cleaning_recipe().decontamination.ngram
    eval_text = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    model = qc.train(qc.split_examples(_docs(), RECIPE), RECIPE)
    return CurationInputs(eval_index=Value({"probe_set": build_index([eval_text], recipe_n)}),
                          quality_model=Value(model))


def _cleaning_recipe():
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe

    return load_cleaning_recipe()


def _curation_step_names() -> list[str]:
    from marin_assets.data.curate.curation_steps import STEPS

    return list(STEPS)


@pytest.mark.parametrize("name", _curation_step_names())
def test_every_curation_step_is_built_shipped_and_run_through_the_platform_calls(name, curation_inputs):
    """What the cleaning job does with each registered step: build_curation(recipe, source, inputs) (the
    factory, recipe switches on), pickled to the workers, Curation.run(text) per document."""
    import pickle

    from marin_assets.data.curate.curation_steps import STEPS, Curation, build_curation
    from marin_assets.data.curate.step_outcome import StepOutcome

    recipe = _cleaning_recipe()
    recipe = recipe.model_copy(update={
        "decontamination": recipe.decontamination.model_copy(update={"enabled": True}),
        "pii": recipe.pii.model_copy(update={"enabled": True, "sources": {}}),
        "quality": recipe.quality.model_copy(update={"score": True, "filter": True}),
    })  # fmt: skip
    step = STEPS[name](recipe, "probe_source", curation_inputs)
    assert step is not None and step.name == name, f"curation step {name} is registered under another name"
    curation = pickle.loads(pickle.dumps(Curation([step])))  # Spark ships the steps to its workers
    touched = []
    for label, text in PROBES.items():
        outcome = curation.run(text)
        assert isinstance(outcome, StepOutcome) and isinstance(outcome.text, str), f"{name} on {label}"
        assert outcome.reject is None or isinstance(outcome.reject, str)
        assert all(isinstance(n, int) and n >= 0 for n in outcome.counts.values()), f"{name} on {label}"
        if outcome.counts or outcome.reject or outcome.text != text:
            touched.append(label)
    assert touched, f"curation step {name} counted, changed or rejected none of {sorted(PROBES)}"
    assert name in [s.name for s in build_curation(recipe, "probe_source", curation_inputs).steps]


def _extractor_kinds() -> list[str]:
    return EXTRACTORS.names()


@pytest.mark.parametrize("kind", _extractor_kinds())
def test_every_extractor_kind_extracts_through_the_cleaners_build_call(kind):
    """What RecordCleaner does with a source's extractor: build_extractor(recipe.extraction, name).extract(html),
    for a recipe entry of each registered kind (the shipped recipe's, else the kind with its default options)."""
    from marin_assets.data.extract.extractor_choice import ExtractorSpec, build_extractor

    settings = _cleaning_recipe().extraction
    names = [name for name, spec in settings.extractors.items() if spec.kind == kind]
    if not names:
        settings = settings.model_copy(update={"extractors": {**settings.extractors, "probe": ExtractorSpec(kind=kind)}})
        names = ["probe"]
    paragraph = " ".join(f"The river {i} runs past the old mill, and the miller counts the sacks." for i in range(12))
    html = f"<html><head><title>t</title></head><body><article><p>{paragraph}</p></article></body></html>"
    text = build_extractor(settings, names[0]).extract(html)
    assert isinstance(text, str) and "the miller counts the sacks" in text, f"extractor kind {kind}: {text[:200]!r}"


@pytest.mark.parametrize("name", family_names())
def test_every_hash_family_signs_through_the_minhasher(name):
    """What the dedup keys are made of: MinHasher(num_perm, shingle, seed, family).signatures(texts); a
    near copy shares most of its signature, an unrelated text few, an empty text none."""
    from marin_assets.data.dedup.dedup_keys import MinHasher

    words = [f"w{i}" for i in range(200)]
    base, near, other = " ".join(words), " ".join(words[:199] + ["changed"]), " ".join(reversed(words))
    signatures, ok = MinHasher(112, 5, 1, name).signatures([base, near, other, ""])
    assert signatures.shape[0] == 4 and list(map(bool, ok)) == [True, True, True, False], name
    assert (signatures[0] == signatures[1]).mean() > 0.8 and (signatures[0] == signatures[2]).mean() < 0.2, name


# Every Registry the package declares and the test above that runs its items through the platform's calls.
COVERED_REGISTRIES = {
    "quality filter": "test_every_filter_runs_alone_through_run_filters_and_names_its_rules",
    "format": "test_every_format_reads_what_its_counter_counts",
    "extractor kind": "test_every_extractor_kind_extracts_through_the_cleaners_build_call",
    "curation step": "test_every_curation_step_is_built_shipped_and_run_through_the_platform_calls",
    "MinHash hash family": "test_every_hash_family_signs_through_the_minhasher",
    "law form": "test_every_law_form_fits_predicts_and_round_trips_through_the_platform_calls",
    "architecture kind": "marin_assets_tests/train/test_architectures.py (MaxText keys, FLOPs, mesh rules per kind)",
    "training launcher": "marin_assets_tests/train/test_training_e2e.py (local) and train_k8s/ (kubernetes)",
}


def test_every_registry_of_the_package_is_covered_here():
    """A new Registry(...) anywhere in the package fails this until a conformance test runs its items."""
    import ast

    from marin_assets.core.import_graph import module_files

    declared = set()
    for path in module_files().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Registry"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                declared.add(node.args[0].value)
    assert declared == set(COVERED_REGISTRIES), f"registries without a conformance test: {declared - set(COVERED_REGISTRIES)}"
