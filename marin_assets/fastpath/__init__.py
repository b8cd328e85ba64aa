"""Fast paths: speed-only twins of maintained libraries, and every use of another package's private internals.

Nothing outside this folder may reach into a dependency's or the standard library's private names
(core/private_uses.py, enforced by marin_assets_tests/core/test_private_uses.py). Each fast path sits
behind a recipe switch whose other value is the library it re-implements, with equivalence tests
(marin_assets_tests/fastpath/) and, for each private use, a tripwire test naming the installed version
when an upgrade changes what it relies on (marin_assets_tests/fastpath/test_tripwires.py):
- words/    spaCy's blank English tokenizer without spaCy (`words: fast | spacy`);
- langid/   py3langid's classifier over many windows in numpy (`language.identifier: fast | py3langid`);
- hashing/  SHA-1 as a compiled JAX kernel for the datasketch-compatible MinHash family
            (`dedup.hash_family: datasketch`; the default `polynomial` needs none of it), and
            str.lower().split() over a whole batch in numpy (lowercase_words.py; equal to str's words,
            marin_assets_tests/data/test_hash_families.py);
- maxtext/  the preemption checkpoint hook and MaxText's optional-dependency stub (no public hook exists);
- spark/    Hadoop's qualified path through PySpark's Py4J gateway (no public call exists).
"""
