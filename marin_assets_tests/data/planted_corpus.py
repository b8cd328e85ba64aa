"""Small planted corpora for the curation tests: English prose that passes the quality filters."""

from __future__ import annotations

import json
import random
from pathlib import Path

_ADJ = ["quiet", "careful", "modern", "ancient", "bright", "narrow", "patient", "simple", "local", "famous"]
_NOUN = ["garden", "library", "engineer", "river", "teacher", "market", "village", "letter", "window", "harbour",
         "kitchen", "museum", "orchard", "station", "painter", "bridge", "forest", "student", "doctor", "festival"]  # fmt: skip
_VERB = ["visited", "described", "repaired", "watched", "admired", "painted", "measured", "opened", "cleaned", "found"]


def prose(seed: int, sentences: int = 8) -> str:
    """Grammatical English sentences (different seeds share few 5-word shingles)."""
    rng = random.Random(seed)
    out = []
    for _ in range(sentences):
        a, b, c = rng.sample(_NOUN, 3)
        out.append(f"The {rng.choice(_ADJ)} {a} of the {b} was {rng.choice(_VERB)} by the {c} and the {rng.choice(_NOUN)} "
                   f"in the morning before they went home.")  # fmt: skip
    return " ".join(out)


def write_jsonl(path: Path, docs: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in sorted(docs.items())))
    return path
