"""The fastText quality classifier on a small planted set: separates the labels, same bytes on rerun."""

from marin_assets.core.hashing import sha256_bytes
from marin_assets.data.curate import quality_classifier as qc
from marin_assets.data.curate.step_outcome import Value
from marin_assets_tests.data.planted_corpus import prose

RECIPE = qc.QualityClassifierRecipe(positive_sources=["good"], negative_sources=["bad"], chunk_words=40, epoch=20,
                                    bucket=200_000)  # fmt: skip
SPAM = "BUY cheap pills now!!! click here best price free shipping limited offer win money fast casino bonus"


def _docs():
    good = [(f"good-{i}", prose(i, sentences=10), qc.POSITIVE) for i in range(30)]
    bad = [(f"bad-{i}", " ".join([SPAM] * 6) + f" item {i}", qc.NEGATIVE) for i in range(30)]
    return good + bad


def test_examples_are_chunked_balanced_and_split_by_id():
    examples = qc.split_examples(_docs(), RECIPE)
    assert examples.label_counts[qc.POSITIVE] > examples.label_counts[qc.NEGATIVE] == 90  # 3 chunks per spam doc
    labels = [label for label, _ in examples.train + examples.held_out]
    assert labels.count(qc.POSITIVE) == labels.count(qc.NEGATIVE) == 90  # balanced down to the minority
    assert 0 < len(examples.held_out) < len(examples.train)
    assert qc.split_examples(_docs(), RECIPE) == examples


def test_training_is_reproducible_and_scores_separate_the_labels():
    examples = qc.split_examples(_docs(), RECIPE)
    model_bytes = qc.train(examples, RECIPE)
    assert sha256_bytes(qc.train(examples, RECIPE)) == sha256_bytes(model_bytes)  # seeded, one thread
    model = qc.load_model(model_bytes)
    metrics = qc.evaluate(model, examples.held_out)
    assert metrics["accuracy"] == 1.0 and metrics["held_out"] == len(examples.held_out)
    features = qc.top_features(model, 5)
    assert {w for w, _ in features["negative"]} & set(SPAM.lower().split())
    step = qc.QualityStep(Value(model_bytes), threshold=0.5)
    assert step.apply(SPAM).reject == qc.REJECT_REASON and step.apply(prose(99)).reject is None
    assert 0.5 <= step.apply(prose(99)).fields["quality_score"] <= 1.0
    assert qc.QualityStep(Value(model_bytes), threshold=None).apply(SPAM).reject is None  # scoring only


def test_one_line_equals_the_whitespace_regex():
    """one_line splits where r"\s+" matches: every code point that is one is one the other is, and mixed texts agree."""
    import random
    import re

    space = re.compile(r"\s")
    assert all(bool(space.fullmatch(chr(c))) == chr(c).isspace() for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    rng = random.Random(3)
    pieces = [" ", "\t", "\n", "\r\n", "\x0b", "\x1c", "\xa0", "\u2003", "\u3000", "\u200b", "A", "ß", "İ", "word", ""]
    for _ in range(2000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 12)))
        assert qc.one_line(text) == re.sub(r"\s+", " ", text.lower()).strip(), repr(text)
