"""Write marin_assets/fastpath/words/spacy_en_rules.json: spaCy's English tokenizer rules, as data.

    .venv/bin/python scripts/make_spacy_en_rules.py   (needs spaCy: the bench group installs it with datatrove)

The quality filters split words as datatrove does (spaCy's blank English tokenizer) without importing
spaCy: filters/words.py runs spaCy's tokenizer algorithm over these rules. The file holds the prefix,
suffix and infix patterns, the URL pattern and the special cases (orth -> its tokens) of the spaCy
version named in it (spaCy is MIT-licensed, (c) ExplosionAI GmbH). Rerun after a spaCy upgrade.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "marin_assets/fastpath/words/spacy_en_rules.json"


def main() -> None:
    import spacy
    from spacy.attrs import ORTH

    tok = spacy.blank("en").tokenizer
    rules = {orth: [t[ORTH] for t in tokens] for orth, tokens in sorted(tok.rules.items()) if not orth.isspace()}
    data = {
        "spacy_version": spacy.__version__,
        "license": "MIT, (c) ExplosionAI GmbH (spaCy's English tokenizer rules)",
        "prefix": tok.prefix_search.__self__.pattern,
        "suffix": tok.suffix_search.__self__.pattern,
        "infix": tok.infix_finditer.__self__.pattern,
        "url": tok.url_match.__self__.pattern,
        "token_match": tok.token_match.__self__.pattern if tok.token_match else None,
        "special_cases": rules,
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT} (spaCy {spacy.__version__}, {len(rules)} special cases)")


if __name__ == "__main__":
    main()
