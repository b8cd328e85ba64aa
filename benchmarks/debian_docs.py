"""Where the benchmark corpus's real documents come from: Debian documentation installed under /usr/share.

Each kind is a generator of (source path, text) in sorted path order: changelog entries grouped to
~4 KB, copyright files, READMEs, man pages rendered to text by groff, and HTML pages. Long texts are
cut on paragraph boundaries so no document dwarfs the others.
"""

from __future__ import annotations

import glob
import gzip
import html
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

MAX_CHARS, CHANGELOG_CHARS = 12_000, 4_000


def _read(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")
    except (OSError, EOFError):
        return ""


def cut_paragraphs(text: str, limit: int = MAX_CHARS) -> list[str]:
    """Pieces of at most ~limit chars, cut on blank lines (a single huge paragraph stays whole)."""
    pieces, current = [], ""
    for para in text.split("\n\n"):
        if current and len(current) + len(para) > limit:
            pieces.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    return [p for p in [*pieces, current] if p.strip()]


def changelog_docs(root: str):
    for path in sorted(glob.glob(f"{root}/doc/*/changelog.Debian.gz")):
        entries = re.split(r"\n(?=\S)", _read(path))  # a new entry starts at column 0
        for text in cut_paragraphs("\n\n".join(e.strip() for e in entries if e.strip()), CHANGELOG_CHARS):
            yield path, text


def copyright_docs(root: str):
    for path in sorted(glob.glob(f"{root}/doc/*/copyright")):
        yield from ((path, t) for t in cut_paragraphs(_read(path)))


def readme_docs(root: str):
    paths = glob.glob(f"{root}/doc/*/README*") + glob.glob(f"{root}/doc/*/*/README*")
    for path in sorted(p for p in paths if os.path.isfile(p) and not p.endswith((".html", ".htm"))):
        yield from ((path, t) for t in cut_paragraphs(_read(path)))


def _render_man(path: str) -> str:
    page = _read(path)
    if page.startswith(".so "):  # an alias of another page: nothing of its own
        return ""
    env = {**os.environ, "LC_ALL": "C.UTF-8", "MANWIDTH": "80"}
    done = subprocess.run(["groff", "-t", "-man", "-Tutf8", "-P-cbou", "-rLL=80n"], input=page.encode(),
                          capture_output=True, env=env, timeout=60)  # fmt: skip
    return done.stdout.decode("utf-8", errors="replace")


def man_docs(root: str, threads: int = 2):
    # English pages only (localised pages live in man/<lang>/); rendered a chunk at a time, in order.
    paths = iter(sorted(glob.glob(f"{root}/man/man*/*.gz")))
    with ThreadPoolExecutor(threads) as pool:
        while chunk := list(islice(paths, 64)):
            for path, text in zip(chunk, pool.map(_render_man, chunk), strict=True):
                yield from ((path, t) for t in cut_paragraphs(text))


def html_docs(root: str):
    for path in sorted(glob.glob(f"{root}/doc/**/*.html", recursive=True)):
        if os.path.isfile(path) and (text := _read(path)).strip():
            yield path, text


# kind -> (container, generator). Round-robin in this order keeps every kind in every corpus size.
KINDS = {"changelog": ("text", changelog_docs), "copyright": ("text", copyright_docs),
         "readme": ("text", readme_docs), "man": ("text", man_docs), "html": ("html", html_docs)}  # fmt: skip


def html_text(page: str) -> str:
    """Rough text of a page for the recombination pool (the cleaning job's extractor is not needed here)."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    page = re.sub(r"(?i)</?(p|div|h[1-6]|li|pre|br|tr)\b[^>]*>", "\n\n", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))
