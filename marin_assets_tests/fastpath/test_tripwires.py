"""Tripwires: each private internal a fast path relies on (marin_assets/fastpath/) is still what it relies on.

One test per use; an upgrade that changes one fails here, naming the installed version, instead of the
fast path silently falling back or changing results. Modules covered (core/private_uses.py checks that
every fast-path module using an internal is named here): infix_search, suffix_search, sha1_kernel,
language_batch, compiled_kernels, preemption_hook, trainer_quiet, hadoop_paths.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

PYTHON = f"Python {sys.version.split()[0]}"


def _source_tree(module: str) -> ast.Module:
    """A dependency's module parsed, not imported (MaxText and PySpark import slowly)."""
    return ast.parse(Path(importlib.util.find_spec(module).origin).read_text())


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def test_re_parser_and_constants_give_what_the_words_fast_path_reads():
    """infix_search, suffix_search and ascii_regex read re's parse tree (re._parser, re._constants)."""
    from marin_assets.fastpath.words import infix_search, suffix_search

    assert infix_search.sre_parse is not None and suffix_search.sre_parse is not None, \
        f"{PYTHON}: re._parser / re._constants no longer import; the words fast path needs them (fastpath/words)"
    c = infix_search.sre_c
    used = ("ANY", "ASSERT", "ASSERT_NOT", "AT", "BRANCH", "CATEGORY", "IN", "LITERAL", "MAXREPEAT", "MAX_REPEAT",
            "MIN_REPEAT", "NEGATE", "NOT_LITERAL", "RANGE", "SUBPATTERN")  # fmt: skip
    missing = [name for name in used if not hasattr(c, name)]
    assert not missing, f"{PYTHON}: re._constants lacks {missing} (fastpath/words reads them)"
    tree = list(infix_search.sre_parse.parse(r"(?<=a)[b-d]x|\d+$"))
    assert tree[0][0] is c.BRANCH and len(tree[0][1][1]) == 2, \
        f"{PYTHON}: re._parser.parse no longer gives (BRANCH, (None, [alternatives])) for an alternation: {tree}"
    first = list(tree[0][1][1][0])
    assert [op for op, _ in first] == [c.ASSERT, c.IN, c.LITERAL] and first[1][1] == [(c.RANGE, (98, 100))], \
        f"{PYTHON}: re._parser.parse changed the shape of lookbehinds, classes or literals: {first}"


def test_cpython_sha1_is_the_one_the_kernel_uses_and_agrees_with_hashlib():
    from marin_assets.fastpath.hashing import sha1_kernel

    try:
        from _sha1 import sha1
    except ImportError as exc:  # the kernel would fall back to hashlib: slower, same digests
        raise AssertionError(f"{PYTHON}: CPython's _sha1 module is gone (fastpath/hashing/sha1_kernel.py)") from exc
    assert sha1_kernel.sha1 is sha1
    for message in (b"", b"abc", bytes(range(256)) * 3):
        assert sha1(message).digest() == hashlib.sha1(message).digest(), f"{PYTHON}: _sha1 disagrees with hashlib"


def test_py3langid_keeps_the_attributes_and_scoring_language_batch_reads():
    from py3langid.langid import LanguageIdentifier

    from marin_assets.fastpath.langid.language_batch import BatchIdentifier
    from marin_assets.fastpath.langid.language_model import mapped_identifier

    identifier = mapped_identifier()
    names = ("_norm_probs", "_alias_pairs", "min_confidence", "nb_classes", "nb_pc", "nb_ptc", "tk_nextmove",
             "tk_row", "tk_output")  # fmt: skip
    missing = [n for n in names if not hasattr(identifier, n)]
    assert not missing, f"py3langid {version('py3langid')}: LanguageIdentifier lacks {missing} (fastpath/langid)"
    assert isinstance(identifier, LanguageIdentifier) and identifier._norm_probs is True
    texts = ["The quick brown fox jumps over the lazy dog.", "Der schnelle braune Fuchs springt über den Hund.",
             "Le renard brun saute par-dessus le chien paresseux.", "x" * 3, "12345 -- ++"]  # fmt: skip
    assert BatchIdentifier(identifier).classify_many(texts) == [identifier.classify(t) for t in texts], \
        f"py3langid {version('py3langid')}: its scoring changed; the batch classifier no longer reproduces it"


def test_jax_serialize_executable_round_trips_a_compiled_kernel():
    import jax
    from jax.experimental import serialize_executable

    from marin_assets.fastpath.hashing import compiled_kernels  # noqa: F401 - the user of this API

    compiled = jax.jit(lambda x: x * 2 + 1).lower(jax.ShapeDtypeStruct((4,), np.int32)).compile()
    try:
        loaded = serialize_executable.deserialize_and_load(*serialize_executable.serialize(compiled))
    except Exception as exc:
        raise AssertionError(f"jax {jax.__version__}: serialize_executable changed (fastpath/hashing/"
                             f"compiled_kernels.py)") from exc
    assert loaded(np.arange(4, dtype=np.int32)).tolist() == [1, 3, 5, 7]


def test_maxtext_maybe_save_checkpoint_is_what_preemption_hook_wraps():
    from marin_assets.fastpath.maxtext import preemption_hook

    module, name = preemption_hook.PATCHED
    tree, maxtext = _source_tree(module), f"maxtext {version('maxtext')}"
    patched = _function(tree, name)
    assert patched is not None, f"{maxtext}: {module}.{name} is gone (fastpath/maxtext/preemption_hook.py)"
    signature = "(" + ast.unparse(patched.args) + ")"
    assert signature == preemption_hook.SIGNATURE, \
        f"{maxtext}: {name}{signature} changed from {preemption_hook.SIGNATURE} (fastpath/maxtext/preemption_hook.py)"
    missing = [f for f in preemption_hook.CALLED if _function(tree, f) is None]
    assert not missing, f"{maxtext}: {module} lacks {missing}, which the preemption hook calls"
    exceptions = _source_tree("maxtext.utils.exceptions")
    assert any(isinstance(n, ast.ClassDef) and n.name == "StopTraining" for n in exceptions.body), \
        f"{maxtext}: maxtext.utils.exceptions.StopTraining is gone (the hook raises it to stop training)"
    # the train loop must still call it through the module attribute, or the patch would not take effect
    callers = [p for p in Path(importlib.util.find_spec("maxtext").origin).parent.rglob("*.py")
               if f"checkpointing.{name}(" in p.read_text()]
    assert callers, f"{maxtext}: nothing calls checkpointing.{name}(...): the patch would never run"


def test_maxtext_gcloud_stub_has_the_mldiagnostics_stub_trainer_quiet_uses():
    tree, maxtext = _source_tree("maxtext.common.gcloud_stub"), f"maxtext {version('maxtext')}"
    for name in ("_mldiagnostics_stub", "mldiagnostics_modules"):
        assert _function(tree, name) is not None, \
            f"{maxtext}: maxtext.common.gcloud_stub.{name} is gone (fastpath/maxtext/trainer_quiet.py)"
    assert not _function(tree, "_mldiagnostics_stub").args.args, f"{maxtext}: _mldiagnostics_stub takes arguments now"


def test_pyspark_session_keeps_the_py4j_gateway_hadoop_paths_uses():
    from marin_assets.fastpath.spark import hadoop_paths  # noqa: F401 - the user of these attributes

    tree = _source_tree("pyspark.sql.session")
    assigned = {t.attr for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    missing = {"_jvm", "_jsc"} - assigned
    assert not missing, f"pyspark {version('pyspark')}: SparkSession no longer sets {missing} (fastpath/spark/hadoop_paths.py)"


def test_a_changed_internal_trips_the_wire_naming_the_version(monkeypatch):
    """The failing cases: what an upgrade would change, changed here by hand."""
    import pytest

    from marin_assets.fastpath.maxtext import preemption_hook
    from marin_assets.fastpath.words import infix_search

    monkeypatch.setattr(preemption_hook, "SIGNATURE", "(checkpoint_manager, state, config)")
    with pytest.raises(AssertionError, match=rf"maxtext {version('maxtext')}: maybe_save_checkpoint\("):
        test_maxtext_maybe_save_checkpoint_is_what_preemption_hook_wraps()
    monkeypatch.undo()
    monkeypatch.setattr(preemption_hook, "CALLED", (*preemption_hook.CALLED, "save_everything"))
    with pytest.raises(AssertionError, match="lacks \\['save_everything'\\]"):
        test_maxtext_maybe_save_checkpoint_is_what_preemption_hook_wraps()
    monkeypatch.setattr(infix_search, "sre_parse", None)
    with pytest.raises(AssertionError, match=rf"{PYTHON}: re._parser"):
        test_re_parser_and_constants_give_what_the_words_fast_path_reads()
