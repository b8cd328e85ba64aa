"""The audit's pure parts: Markdown rendering from a report dict, and finding a run's output folder."""

from marin_assets.core.storage import MANIFEST_NAME, Storage
from marin_assets.governance.audit import locate_run_output, render_audit_markdown


def _report(problems: list[str], cleared: bool | None) -> dict:
    node = {
        "label": "training_run[r1]", "depth": 0, "output_uri": "gs://b/training/r1/final", "output_hash": "f" * 64,
        "recipe_hash": "a" * 64, "recipe": {"model": "tiny"}, "code_version": "c" * 16, "git_commit": "1234567890ab",
        "git_dirty": False, "uv_lock_sha256": "d" * 64, "python": "3.12.1", "spark": "4.3.0",
        "devices": ["tpu x16"], "run_id": "0123456789", "finished_at": "2026-12-01T03:10:00+00:00",
        "inputs": [{"label": "mixture[sample]", "data_version": "e" * 64, "uri": "gs://b/mixtures/sample",
                    "status": "verified"}],
    }
    source = {"source": "web", "license": "CC-BY-4.0", "terms": "attribution", "cleared": cleared, "problems": [],
              "inventory": {"content_hash": "9" * 64, "file_count": 12}}
    return {"run": "r1", "checkpoint_uri": node["output_uri"], "generated_at": "2026-12-01T04:00:00+00:00",
            "nodes": [node], "sources": [source], "problems": problems}


def test_markdown_tables_show_sources_lineage_and_details():
    markdown = render_audit_markdown(_report([], cleared=True))
    assert markdown.startswith("# Audit: training run `r1`")
    assert "**All sources cleared; every input verified.**" in markdown
    assert "| web | CC-BY-4.0 | attribution | yes | `9999999999999999` | 12 |" in markdown
    assert "| 0 | training_run[r1] | `ffffffffffff` | `aaaaaaaaaaaa` | `cccccccccccc` | `1234567890` |" in markdown
    assert "- input mixture[sample]: `eeeeeeeeeeee` (verified)" in markdown
    assert "spark 4.3.0, devices tpu x16" in markdown
    assert '"model": "tiny"' in markdown


def test_markdown_lists_problems_and_uncleared_sources():
    markdown = render_audit_markdown(_report(["source web is not cleared: checksum mismatch"], cleared=False))
    assert "**1 problem(s):**\n- source web is not cleared: checksum mismatch" in markdown
    assert "| web | CC-BY-4.0 | attribution | **NO** |" in markdown


def test_run_output_is_found_in_a_sub_folder_by_its_manifest(tmp_path):
    storage = Storage(str(tmp_path))
    storage.write_json_atomic({"asset": "training_plan"}, "training", "r1", "plan", MANIFEST_NAME)
    storage.write_json_atomic({"asset": "training_run"}, "training", "r1", "final", MANIFEST_NAME)
    assert locate_run_output(storage, "r1") == storage.uri("training", "r1", "final")
    assert locate_run_output(storage, "never") == storage.uri("training", "never")
