"""Per-filter decision agreement with datatrove's FineWeb filters (used by bench_cleaning_filters.py).

Each filter of ours and its datatrove counterpart judge the same text: the text our pipeline hands
that filter (after reflow; FineWeb after our C4 line removal). "pipeline": the four filters in a row
on each side, configured as in the throughput runs (our reflow and max_removed_frac off): the share
of documents both keep or both reject (target >= 0.995), in process.
"""

from __future__ import annotations

from collections import defaultdict

from datatrove.data import Document
from datatrove.pipeline.filters import C4QualityFilter, FineWebQualityFilter, GopherQualityFilter, GopherRepetitionFilter

from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.extract.extractor_choice import html_to_text
from marin_assets.data.clean.filters import c4, fineweb, gopher_quality, gopher_repetition
from marin_assets.data.clean.filters.pipeline import run_filters
from marin_assets.data.clean.filters.reflow import reflow
from marin_assets.data.clean.filters.text import TextView
from marin_assets.data.clean.normalize import normalize_text
from marin_assets.data.formats.readers import RawRecord, list_source_files, read_file
from marin_assets.data.sources.source_registry import load_sources

FILTERS = ("gopher_repetition", "gopher_quality", "c4", "fineweb")
EXAMPLES = 3


def sample_documents() -> list[dict]:
    """The sample sources' documents, extracted and normalised as the cleaning job does."""
    docs = []
    for spec in load_sources().sources:
        for path in list_source_files(spec):
            for rec in read_file(path, spec):
                if isinstance(rec, RawRecord):
                    text = html_to_text(rec.content) if rec.content_type == "html" else rec.content
                    if text := normalize_text(text):
                        docs.append({"id": f"{spec.name}:{rec.id}", "text": text})
    return docs


def _peer(peer, text: str) -> tuple[str | None, str]:
    doc = Document(text=text, id="x")
    verdict = peer.filter(doc)
    if verdict is True:
        return None, doc.text
    return (verdict[1] if isinstance(verdict, tuple) else "rejected"), doc.text


def _peer_chain(peers: list, text: str) -> bool:
    """datatrove's filters in a row on one document (C4 rewrites its text for the next): kept?"""
    doc = Document(text=text, id="x")
    return all(peer.filter(doc) is True for peer in peers)


def measure_agreement(docs: list[dict]) -> dict:
    settings = load_cleaning_recipe().filters
    c4_cfg = settings.c4.model_copy(update={"max_removed_frac": None})
    peers = {
        "gopher_repetition": GopherRepetitionFilter(),
        "gopher_quality": GopherQualityFilter(),
        "c4": C4QualityFilter(filter_no_terminal_punct=c4_cfg.filter_no_terminal_punct),
        "fineweb": FineWebQualityFilter(),
    }
    result = {name: {"same": 0, "same_rule": 0, "n": 0, "pairs": defaultdict(list)} for name in FILTERS}
    result["c4"]["same_text"] = 0
    budget_only = 0
    pipeline = settings.model_copy(update={"reflow": None, "c4": c4_cfg})
    result["pipeline"] = {"same": 0, "n": 0, "pairs": defaultdict(list)}
    for doc in docs:
        ours_kept = run_filters(doc["text"], pipeline).kept
        theirs_kept = _peer_chain([peers[name] for name in FILTERS], doc["text"])
        result["pipeline"]["n"] += 1
        result["pipeline"]["same"] += ours_kept == theirs_kept
        if ours_kept != theirs_kept:
            result["pipeline"]["pairs"][("kept" if ours_kept else "rejected", "kept" if theirs_kept else "rejected")].append(
                (doc["id"], doc["text"][:90].replace("\n", " | ")))
        text = reflow(doc["text"], settings.reflow) if settings.reflow else doc["text"]
        view = TextView(text)
        lines = c4.filter_lines(text, c4_cfg)
        ours = {
            "gopher_repetition": gopher_repetition.check(view, settings.gopher_repetition),
            "gopher_quality": gopher_quality.check(view, settings.gopher_quality),
            "c4": lines.rule,
        }
        fineweb_input = lines.text if lines.rule is None else text
        ours["fineweb"] = fineweb.check(fineweb_input, settings.fineweb)
        if lines.rule is None and settings.c4.max_removed_frac is not None:
            budget_only += lines.removed_frac > settings.c4.max_removed_frac
        for name in FILTERS:
            theirs, their_text = _peer(peers[name], fineweb_input if name == "fineweb" else text)
            entry = result[name]
            entry["n"] += 1
            entry["same"] += (ours[name] is None) == (theirs is None)
            entry["same_rule"] += ours[name] == theirs
            if name == "c4":
                entry["same_text"] += lines.rule is not None or theirs is not None or lines.text == their_text
            if ours[name] != theirs:
                examples = entry["pairs"][(ours[name] or "kept", theirs or "kept")]
                examples.append((doc["id"], text[:90].replace("\n", " | ")))
    result["budget_only"] = budget_only
    result["docs"] = len(docs)
    return result


def print_agreement(result: dict) -> None:
    print(f"{'filter':18} {'decision':>9} {'rule':>9}  (target: decision >= 0.99)")
    for name in FILTERS:
        entry = result[name]
        line = f"{name:18} {entry['same'] / entry['n']:9.4f} {entry['same_rule'] / entry['n']:9.4f}"
        if name == "c4":
            line += f"  kept text identical: {entry['same_text'] / entry['n']:.4f}"
        print(line + ("  OK" if entry["same"] / entry["n"] >= 0.99 else "  BELOW TARGET"))
    entry = result["pipeline"]
    print(f"{'pipeline':18} {entry['same'] / entry['n']:9.4f} {'':>9}  both keep or both reject (target >= 0.995)")
    print(f"c4 max_removed_frac (ours only, not in datatrove) would reject {result['budget_only']} of "
          f"{result['docs']} documents")  # fmt: skip
    for name in (*FILTERS, "pipeline"):
        pairs = result[name]["pairs"]
        if not pairs:
            continue
        print(f"disagreements, {name} (ours -> datatrove: count, examples):")
        for (ours, theirs), examples in sorted(pairs.items(), key=lambda kv: -len(kv[1])):
            print(f"  {ours} -> {theirs}: {len(examples)}")
            for doc_id, excerpt in examples[:EXAMPLES]:
                print(f"      {doc_id}: {excerpt}")
