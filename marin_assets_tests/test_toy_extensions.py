"""Adding a filter, a format, an extractor or a law form is one new file plus a recipe entry (docs/extending.md).

A temporary copy of the package gets four toy modules, each dropped into its extension folder with no
other file edited, and recipe entries naming them; a fresh interpreter on that copy then runs them
through the platform's own calls: a source of the toy format read by `read_file` and counted by
`count_records`, its records cleaned by `RecordCleaner.clean_many` (the toy extractor on its HTML page,
the toy filter on its text, in the recipe's order), and the toy law form fitted by `fit_parametric`
from the scaling recipe's `fit.law`. The same run without the files fails on the recipe entries.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

import marin_assets

TOY_FILES = {
    "data/clean/filters/toy_shouting.py": '''
        """Toy filter: rejects shouting (mostly capital letters)."""
        from marin_assets.core.recipes import Recipe
        from marin_assets.data.clean.filters.filter_base import QualityFilter, Rule, frac, register


        class ShoutingConfig(Recipe):
            max_upper_frac: float | None = 0.5


        def upper_frac(view, cfg) -> float:
            return frac(sum(c.isupper() for c in view.text), sum(c.isalpha() for c in view.text))


        @register("toy_shouting")
        class Shouting(QualityFilter):
            Config = ShoutingConfig
            rules = (Rule("upper_frac", upper_frac, "max_upper_frac", ">", digits=3),)
    ''',
    "data/formats/toy_tsv.py": '''
        """Toy format: one record per line, "id<TAB>kind<TAB>content" (kind text or html; newlines as \\\\n)."""
        from marin_assets.data.formats.format_base import FileFormat, register_format
        from marin_assets.data.formats.records import QuarantinedRecord, RawRecord


        @register_format
        class ToyTsv(FileFormat):
            suffixes = {"toy_tsv": (".tsv",)}

            def read(self, path, spec, max_record_bytes):
                with open(path, encoding="utf-8") as f:
                    offset = 0
                    for line in f:
                        parts = line.rstrip("\\n").split("\\t")
                        if len(parts) != 3:
                            yield QuarantinedRecord(path, offset, "toy_bad_line", line[:200])
                        else:
                            content = parts[2].replace("\\\\n", "\\n")
                            yield RawRecord(parts[0], None, content, parts[1], {}, len(line.encode()), path, offset)
                        offset += len(line.encode())

            def count(self, uri, spec):
                with open(uri, encoding="utf-8") as f:
                    return sum(1 for _ in f)
    ''',
    "data/extract/extractors/toy_keep_class.py": '''
        """Toy extractor: the text of the <p> elements with a given class, one paragraph each."""
        from html.parser import HTMLParser

        from marin_assets.core.recipes import Recipe
        from marin_assets.data.extract.extractors.base import register


        class KeepClassOptions(Recipe):
            keep_class: str = "keep"


        class _Paragraphs(HTMLParser):
            def __init__(self, keep_class):
                super().__init__()
                self.keep_class, self.inside, self.found = keep_class, False, []

            def handle_starttag(self, tag, attrs):
                if tag == "p" and dict(attrs).get("class") == self.keep_class:
                    self.inside = True
                    self.found.append("")

            def handle_endtag(self, tag):
                if tag == "p":
                    self.inside = False

            def handle_data(self, data):
                if self.inside:
                    self.found[-1] += data


        @register("toy_keep_class")
        class KeepClassExtractor:
            Options = KeepClassOptions

            def __init__(self, options, resolve=None):
                self.options = options

            def extract(self, html):
                parser = _Paragraphs(self.options.keep_class)
                parser.feed(html)
                return "\\n\\n".join(p.strip() for p in parser.found)
    ''',
    "scaling/laws/toy_symmetric.py": '''
        """Toy law form: Chinchilla with one exponent for N and D (beta = alpha)."""
        import numpy as np

        from marin_assets.scaling.laws.base import register
        from marin_assets.scaling.laws.chinchilla import HOFFMANN_GRID, ChinchillaForm, ParametricLaw, best_grid_points


        @register
        class SymmetricForm(ChinchillaForm):
            name = "toy_symmetric"
            param_names = ("E", "A", "B", "alpha")

            def predict_log(self, theta, features):
                a, b, e, alpha = theta
                log_l, jac = super().predict_log(np.array([a, b, e, alpha, alpha]), features)
                return log_l, np.vstack([jac[:3], jac[3] + jac[4]])

            def starts(self, features, log_l, weights, delta, top_k, grid=None):
                grid = HOFFMANN_GRID if grid is None else np.asarray(grid, float)
                grid = grid[np.isclose(grid[:, 3], grid[:, 4])]
                return [p[:4] for p in best_grid_points(grid, *features, log_l, weights, delta, top_k)[0]]

            def to_law(self, theta, context):
                return super().to_law([*theta, theta[3]], context)

            def to_theta(self, law):
                return super().to_theta(law)[:4]

            def from_params(self, params, context=None):
                return ParametricLaw(**{k: float(params[k]) for k in self.param_names}, beta=float(params["alpha"]))
    ''',
}

# Run in the copy: the platform's calls on the toy source, then the toy law form from the scaling recipe.
DRIVER = '''
import json, sys
import numpy as np
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.clean.cleaning_rows import RECORD_COLUMNS, RecordCleaner, record_tuple
from marin_assets.data.formats.readers import list_source_files, read_file
from marin_assets.data.formats.record_counts import count_records
from marin_assets.data.sources.source_registry import load_sources
from marin_assets.scaling.parametric import fit_parametric
from marin_assets.scaling.suite import load_scaling_recipe

spec = load_sources().get("toy_source")
[path] = list_source_files(spec)
records = [dict(zip(RECORD_COLUMNS, record_tuple(r, "toy.tsv"))) for r in read_file(path, spec)]
rows = RecordCleaner(load_cleaning_recipe(), "toy_source").clean_many(records)
law = load_scaling_recipe().fit.law
N = np.array([1e7, 3e7, 1e8, 3e8, 1e9, 1e7, 1e8, 1e9]); D = np.array([2e9, 6e8, 2e8, 6e9, 2e9, 2e10, 2e10, 2e8])
L = 1.7 + 400.0 / N ** 0.33 + 1500.0 / D ** 0.33
fit = fit_parametric(N, D, L, method="huber", law=law, top_k=3)
print(json.dumps({"count": count_records(path, spec), "rows": [{k: r[k] for k in ("id", "status", "reason", "value", "text")}
                  for r in rows], "law": law, "alpha": fit.law.alpha, "beta": fit.law.beta}))
'''

SENTENCES = ("The river runs past the old mill and into the valley below the town. Farmers bring their grain "
             "to be ground there before the winter comes. Children play with the dogs that live near the water "
             "in the summer. Every spring the snow melts and the current grows strong and cold. Visitors often "
             "stop to watch the wheel turn slowly in the morning light. The miller keeps careful records of each "
             "sack that passes through his door. In the evening the lamps are lit and the workers walk home.")


def _copy_with_recipes(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(Path(marin_assets.__file__).parent, root / "marin_assets",
                    ignore=shutil.ignore_patterns("__pycache__", "sample_data"))
    recipes = root / "marin_assets" / "recipes"
    (tmp_path / "toy").mkdir()
    html = f'<html><body><p class="keep">{SENTENCES}</p><p>DROPPED BY THE TOY EXTRACTOR</p></body></html>'
    (tmp_path / "toy" / "toy.tsv").write_text(f"plain\ttext\t{SENTENCES}\nshout\ttext\t{SENTENCES.upper()}\n"
                                               f"page\thtml\t{html}\n")
    (recipes / "sources.yaml").write_text(yaml.safe_dump({"sources": [{
        "name": "toy_source", "uri": str(tmp_path / "toy"), "format": "toy_tsv", "license": "CC0-1.0"}]}))
    cleaning = yaml.safe_load((recipes / "cleaning.yaml").read_text())
    cleaning["filters"] = {"toy_shouting": {"max_upper_frac": 0.6}, **cleaning["filters"]}  # first, by the recipe's order
    cleaning["extraction"]["sources"] = {"toy_source": "toy"}
    cleaning["extraction"]["extractors"]["toy"] = {"kind": "toy_keep_class", "options": {"keep_class": "keep"}}
    cleaning["extraction"]["timeout_seconds"] = None
    cleaning["language"]["allowlist"] = []
    (recipes / "cleaning.yaml").write_text(yaml.safe_dump(cleaning, sort_keys=False))
    scaling = recipes / "scaling" / "cpu_suite.yaml"
    suite = yaml.safe_load(scaling.read_text())
    suite["fit"] = {**suite.get("fit", {}), "law": "toy_symmetric"}
    scaling.write_text(yaml.safe_dump(suite, sort_keys=False))
    return root


def _run(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "MARIN_RECIPES_DIR": str(root / "marin_assets" / "recipes"),
           "MARIN_DATA_ROOTS": str(root.parent / "toy")}
    return subprocess.run([sys.executable, "-c", DRIVER], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_a_toy_filter_format_extractor_and_law_form_are_one_file_each_plus_a_recipe_entry(tmp_path):
    root = _copy_with_recipes(tmp_path)
    without = _run(root)  # the recipe entries alone: refused, naming the unknown name and the known ones
    assert without.returncode != 0 and "unknown format 'toy_tsv'; known: html_dir, jsonl" in without.stderr, without.stderr[-2000:]

    for relative, source in TOY_FILES.items():
        (root / "marin_assets" / relative).write_text(textwrap.dedent(source).lstrip())
    done = _run(root)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    rows = {row["id"]: row for row in result["rows"]}
    assert result["count"] == len(rows) == 3  # the toy counter agrees with the toy reader
    assert rows["plain"]["status"] == "kept", rows["plain"]
    assert rows["shout"]["reason"] == "toy_shouting:upper_frac" and float(rows["shout"]["value"]) > 0.6
    assert rows["page"]["status"] == "kept" and "DROPPED" not in rows["page"]["text"]
    assert rows["page"]["text"].startswith("The river runs past the old mill")
    assert result["law"] == "toy_symmetric" and abs(result["alpha"] - 0.33) < 0.02 and result["alpha"] == result["beta"]
