"""Small planted corpora for the curation tests: English prose that passes the quality filters."""

from __future__ import annotations

import json
import random
from pathlib import Path

_WORDS = ("garden library engineer river teacher market village letter window harbour kitchen museum orchard station "
          "painter bridge forest student doctor festival lantern meadow castle violin sailor baker island tower "
          "mountain valley carpet mirror candle ladder bicycle notebook compass blanket kettle").split()
_ADJ = "quiet careful modern ancient bright narrow patient simple local famous gentle rusty golden hidden".split()
_VERB = "visited described repaired watched admired painted measured opened cleaned found borrowed carried".split()
_TEMPLATES = [
    "The {a} {n1} near the {n2} was {v} by a {n3} last spring.",
    "Everyone agreed that a {a} {n1} should never be {v} without a {n2}.",
    "Her {n1} had been {v} twice, yet the {a} {n2} still stood beside every {n3}.",
    "Nobody in our {n1} remembers why the {n2} was {v} so late.",
    "If you follow the {a} {n1} past that {n2}, you will reach an old {n3}.",
    "My uncle {v} his {a} {n1} while we waited at the {n2}.",
    "Tomorrow we hope to see how a {n1} and some {n2} can be {v} together.",
]


def prose(seed: int, sentences: int = 8) -> str:
    """Grammatical English sentences that pass the quality filters (different seeds share few shingles)."""
    rng = random.Random(seed)
    out = []
    for template in rng.sample(_TEMPLATES, len(_TEMPLATES)) + rng.sample(_TEMPLATES, sentences - len(_TEMPLATES)):
        n1, n2, n3 = rng.sample(_WORDS, 3)
        out.append(template.format(a=rng.choice(_ADJ), n1=n1, n2=n2, n3=n3, v=rng.choice(_VERB)))
    return " ".join(out)


def write_jsonl(path: Path, docs: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in sorted(docs.items())))
    return path
