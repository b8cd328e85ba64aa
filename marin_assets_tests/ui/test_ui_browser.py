"""The Dagster UI in headless Chromium (Playwright) against `dagster dev` on 127.0.0.1.

One server per module (~30-120 s to start). Screenshots land in test-artifacts/ui/ (git-ignored)
for a person to look at; the assertions are about what the page shows and what the run did.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.stage_jobs import job_name_for
from marin_assets_tests.dagster_dev import REPO_ROOT, dagster_dev
from marin_assets_tests.ui.plot_materializations import (
    SCALING_PLOT_ASSET,
    SCALING_PLOT_KEY,
    TRAINING_PLOT_ASSET,
    training_run_metadata,
)
from marin_assets_tests.ui.quickstart import SOURCE_SENSOR, ingest_sources, quickstart_workspace, submit_stage_run

pytestmark = pytest.mark.slow

CHROMIUM = Path(os.environ.get("MARIN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "ui"
STAGE_GROUPS = {"data", "tokenize", "train", "governance"}
CHEAP_ASSET, CHEAP_PARTITION = "raw_corpus", "debian_licenses"
CLEANED_ASSET, CLEANED_PARTITION = "cleaned_documents", "dirty_web"  # the small source every rule rejects from
AUTOMATION_SENSOR = "default_automation_condition_sensor"
NIGHTLY_SCHEDULE = "nightly_validation_schedule"
LOAD_TIMEOUT_MS = 180_000  # the first page waits for the code location to load on a busy 2-core machine
RUN_TIMEOUT_S = 240
CLEANING_TIMEOUT_S = 900  # Spark's start and the cleaning job on a loaded 2-core machine
LEGIBLE_PREVIEW = (280, 100)  # core/line_preview.py: the loss curve's inline preview, text >= 8 px

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} not installed (Debian: apt-get install chromium; .ci/run installs it)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from marin_assets.definitions import defs

    return defs


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    ws, env = quickstart_workspace(tmp_path_factory.mktemp("ui"))
    home = ws.root / "dagster_home"
    ingest_sources(home, env)  # as the quickstart leaves the instance; the source sensor stays on
    with dagster_dev(home, module="marin_assets.definitions", attribute="defs", env=env) as running:
        yield running


@pytest.fixture(scope="module")
def cleaning_run(server, defs) -> str:
    """raw_corpus + cleaned_documents of one source, launched as materialize-all launches them."""
    return submit_stage_run(server, defs, ["raw_corpus", CLEANED_ASSET], CLEANED_PARTITION)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(60_000)
    yield page
    page.close()


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def stage_groups(defs: dg.Definitions) -> set[str]:
    return {spec.group_name for spec in defs.resolve_all_asset_specs() if spec.group_name}


def test_asset_graph_shows_every_stage_group(server, page, defs, cleaning_run):
    # cleaning_run is launched here, first: it cleans while the other pages are checked
    expected = stage_groups(defs)
    assert STAGE_GROUPS <= expected
    page.goto(f"{server.url}/asset-groups")
    for group in sorted(expected):  # each group is listed left of the graph and drawn in it
        page.get_by_text(group, exact=True).first.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # let the graph lay out before the picture
    assert screenshot(page, "asset_groups").stat().st_size > 10_000


def wait_for_run(server, run_id: str, timeout_s: float = RUN_TIMEOUT_S) -> dg.DagsterRunStatus:
    from dagster_graphql import DagsterGraphQLClient

    client = DagsterGraphQLClient("127.0.0.1", port_number=server.port)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = client.get_run_status(run_id)
        if status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
            return status
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} still {status} after {timeout_s:.0f} s; server log: {server.log}")


def follow_launched_run(server, page) -> dg.DagsterRunStatus:
    """From the "Launched run ..." toast to the run page; wait for the run to end; show its log."""
    page.get_by_text("View", exact=True).click()
    page.wait_for_url("**/runs/*")
    run_id = page.url.rstrip("/").split("/runs/")[1].split("?")[0]
    status = wait_for_run(server, run_id)
    page.reload()
    page.get_by_text("RUN_SUCCESS" if status == dg.DagsterRunStatus.SUCCESS else "RUN_FAILURE").first.wait_for()
    return status


def test_materialize_one_partition_from_the_ui(server, page):
    page.goto(f"{server.url}/assets/{CHEAP_ASSET}")
    page.locator("button", has_text="Materialize").first.click(timeout=LOAD_TIMEOUT_MS)
    dialog = page.get_by_role("dialog")
    pick_partition(page, dialog, CHEAP_PARTITION)
    page.keyboard.press("Escape")  # closes the partition list, not the dialog
    dialog.get_by_role("button", name="Launch 1 run").click()

    # Dagster launches it as __ASSET_JOB; the instance's run coordinator named it before queuing it,
    # so the tags are there at once, before the run starts (run_names_sensor could only add them later)
    from marin_assets.stage_jobs import ASSET_TAG, PARTITION_TAG, STAGE_JOB_TAG

    page.get_by_text("View", exact=True).click()
    page.wait_for_url("**/runs/*")
    run_id = page.url.rstrip("/").split("/runs/")[1].split("?")[0]
    wanted = {ASSET_TAG: CHEAP_ASSET, PARTITION_TAG: CHEAP_PARTITION, STAGE_JOB_TAG: "data_cleaned_documents_job"}
    with dg.DagsterInstance.from_config(str(server.home)) as instance:
        first_look = instance.get_run_by_id(run_id).tags
    assert {k: first_look.get(k) for k in wanted} == wanted

    assert wait_for_run(server, run_id) == dg.DagsterRunStatus.SUCCESS
    page.reload()
    page.get_by_text("RUN_SUCCESS").first.wait_for()
    screenshot(page, "materialize_run")
    inventory = Path(server.home).parent / "storage" / "raw" / CHEAP_PARTITION / "inventory.json"
    assert inventory.exists()  # the run really wrote the asset's output
    page.goto(f"{server.url}/runs")  # the runs list shows a run's tags on its row
    row = page.locator("div[data-index]", has=page.locator(f'a[href="/runs/{run_id}"]')).first
    row.wait_for(timeout=LOAD_TIMEOUT_MS)
    row.get_by_text(f"{ASSET_TAG}: {CHEAP_ASSET}").wait_for()
    row.get_by_text(f"{PARTITION_TAG}: {CHEAP_PARTITION}").wait_for()
    screenshot(page, "materialize_run_tagged")


def pick_partition(page, dialog, partition: str) -> None:
    """Open the launch dialog's partition list and pick `partition`. On a loaded machine the list can open
    before the partition keys arrive and then stay empty (CI: no menu item in 60 s), so an empty list is
    closed and opened again until the key shows, within LOAD_TIMEOUT_MS."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    item = page.get_by_role("menuitem").filter(has_text=partition)
    deadline = time.monotonic() + LOAD_TIMEOUT_MS / 1000
    while True:
        dialog.get_by_text("Select a partition or create one").click()
        try:
            item.click(timeout=15_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
            if page.get_by_role("menu").count():
                page.keyboard.press("Escape")  # the open, empty list; with none open Escape would close the dialog


def metadata_row(page, key: str):
    """The row of the latest materialization's metadata table (asset overview) whose key is `key`."""
    # by the key cell's text: a cell's accessible name would also match a plot's alt text
    row = page.locator("tr", has=page.locator("td:first-child").get_by_text(key, exact=True)).first
    row.wait_for(timeout=LOAD_TIMEOUT_MS)
    return row


def metadata_value(page, key: str) -> str:
    return metadata_row(page, key).locator("td").nth(2).inner_text().strip()


def assert_inline_plot(page, plot_key: str, min_size: tuple[int, int] = (120, 60)) -> None:
    """The full plot's row comes first (its [Show Markdown] opens it legibly), then the preview drawn in
    the metadata table itself: a decoded <img> of at least `min_size`, no "Show Markdown"."""
    row = metadata_row(page, f"{plot_key} (preview)")
    keys = [text.strip() for text in page.locator("tr > td:first-child").all_inner_texts()]
    assert keys.index(plot_key) < keys.index(f"{plot_key} (preview)"), keys[:8]
    assert metadata_row(page, plot_key).get_by_text("[Show Markdown]").count() == 1
    assert row.get_by_text("[Show Markdown]").count() == 0
    image = row.locator("img").first
    image.wait_for()  # visible: in the page as it loads, nothing pressed or expanded
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    width, height = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width >= min_size[0] and height >= min_size[1]  # decoded at its size, not a broken-image icon
    row.scroll_into_view_if_needed()


def show_markdown_image(page, metadata_key: str):
    """The full-size plot behind "[Show Markdown]", decoded (one click: a reader's second look)."""
    metadata_row(page, metadata_key).get_by_text("[Show Markdown]").click()
    image = page.get_by_role("dialog").locator("img").first
    image.wait_for()
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    width, height = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width >= 300 and height >= 200
    page.keyboard.press("Escape")


def latest_metadata(server, key: str) -> dict:
    with dg.DagsterInstance.from_config(str(server.home)) as instance:
        [record] = instance.fetch_materializations(dg.AssetKey(key), limit=1).records
    return {k: v.value for k, v in record.asset_materialization.metadata.items()}


def test_training_run_summary_and_loss_curve_without_a_click(server, page, defs):
    """Reported, not trained: the metadata is what training_run's own report code returns."""
    key = dg.AssetKey(TRAINING_PLOT_ASSET)
    partition = defs.resolve_asset_graph().get(key).partitions_def.get_partition_keys()[0]
    plot_key, metadata = training_run_metadata()
    with dg.DagsterInstance.from_config(str(server.home)) as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition, metadata=metadata))

    page.goto(f"{server.url}/assets/{TRAINING_PLOT_ASSET}")
    assert_inline_plot(page, plot_key, min_size=LEGIBLE_PREVIEW)  # drawn from the curves: 12-px axis values
    caption = metadata_row(page, f"{plot_key} (preview)").inner_text()
    assert "eval loss" in caption  # which line is which, as text under the image
    assert metadata_value(page, "final_eval_loss") == "2.31"
    assert metadata_value(page, "num_params") == "200000"
    screenshot(page, "training_run_summary")
    show_markdown_image(page, plot_key)


def test_parametric_fit_summary_and_plot_without_a_click(server, page, defs):
    if not defs.resolve_asset_graph().has(dg.AssetKey(SCALING_PLOT_ASSET)):
        pytest.skip("scaling stage not wired")
    page.goto(f"{server.url}/assets/{SCALING_PLOT_ASSET}")
    page.locator("button", has_text="Materialize").first.click(timeout=LOAD_TIMEOUT_MS)
    # scaling_run's results were written as files, so Dagster warns that upstream was never materialized
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    assert follow_launched_run(server, page) == dg.DagsterRunStatus.SUCCESS

    page.goto(f"{server.url}/assets/{SCALING_PLOT_ASSET}")
    assert_inline_plot(page, SCALING_PLOT_KEY, min_size=(240, 90))  # drawn from the runs (the smallest size tried)
    assert "squares: runs" in metadata_row(page, f"{SCALING_PLOT_KEY} (preview)").inner_text()  # its caption
    stored = latest_metadata(server, SCALING_PLOT_ASSET)
    assert metadata_value(page, "n_runs") == str(stored["n_runs"]) and stored["n_runs"] > 0
    assert metadata_value(page, "law") == stored["law"]
    screenshot(page, "parametric_fit_summary")
    # the fitted law: a row per parameter, 4 significant figures, and its bootstrap interval
    table = metadata_row(page, "parameters")
    for record in stored["parameters"].records:
        cells = table.locator("tr", has=page.locator("td:first-child").get_by_text(record.data["parameter"], exact=True))
        shown = [cell.strip() for cell in cells.first.locator("td").all_inner_texts()]
        assert float(shown[1]) == record.data["value"]  # as stored: already rounded (stored JSON keeps all)
        assert float(shown[2]) <= float(shown[3])  # the interval's ends, both shown
    table.scroll_into_view_if_needed()
    screenshot(page, "parametric_fit_parameters")
    show_markdown_image(page, SCALING_PLOT_KEY)


def test_cleaned_documents_summary_without_a_click(server, page, cleaning_run):
    assert wait_for_run(server, cleaning_run, CLEANING_TIMEOUT_S) == dg.DagsterRunStatus.SUCCESS
    stats = json.loads((Path(server.home).parent / "storage" / "cleaned" / CLEANED_PARTITION / "stats.json").read_text())
    assert stats["rejected"] > 0 and len(stats["rejected_by_rule"]) > 1  # something for the summary to say

    page.goto(f"{server.url}/assets/{CLEANED_ASSET}")
    for key in ("records_in", "kept", "rejected", "quarantined"):  # the counts, as cleaning wrote them
        assert metadata_value(page, key) == str(stats[key]), key
    rules = metadata_row(page, "rejected_by_rule")  # one table, a row per rule, drawn inline
    for rule, n in stats["rejected_by_rule"].items():
        cells = rules.locator("tr", has=page.locator("td:first-child").get_by_text(rule, exact=True)).locator("td")
        assert cells.nth(2).inner_text().strip() == str(n), rule
    metadata_row(page, "kept").scroll_into_view_if_needed()
    screenshot(page, "cleaned_documents_summary")


def test_runs_list_names_the_asset_and_stage_job(server, page, defs, cleaning_run):
    from marin_assets.stage_jobs import ASSET_TAG, PARTITION_TAG

    job = job_name_for(defs.assets or [], dg.AssetKey(CLEANED_ASSET))
    page.goto(f"{server.url}/runs")
    row = page.locator("div[data-index]", has=page.locator(f'a[href="/runs/{cleaning_run}"]')).first  # a list row
    row.wait_for(timeout=LOAD_TIMEOUT_MS)
    row.get_by_role("link", name=job, exact=True).wait_for()  # the stage job, not __ephemeral_asset_job__
    row.get_by_text(f"{ASSET_TAG}: {CLEANED_ASSET}").wait_for()  # and what it built
    row.get_by_text(f"{PARTITION_TAG}: {CLEANED_PARTITION}").wait_for()
    screenshot(page, "runs_list")


def graphql(server, query: str, variables: dict) -> dict:
    import urllib.request

    request = urllib.request.Request(f"{server.url}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": query, "variables": variables}).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["data"]


def test_overview_timeline_shows_submitted_runs(server, page, defs, cleaning_run):
    """The timeline draws only runs with a code location origin (useRunsForTimeline: `if
    (!run.repositoryOrigin) return;`). Runs submitted through the instance (UI, sensors, the GraphQL
    launch materialize-all's tags are given here) have one; the instance's earlier in-process CLI runs
    of the same stage job (ingest_sources) have none, so the job's row is there because of this run."""
    job = job_name_for(defs.assets or [], dg.AssetKey(CLEANED_ASSET))
    query = "query($id: ID!) { runOrError(runId: $id) { ... on Run { pipelineName repositoryOrigin { repositoryLocationName } } } }"
    run = graphql(server, query, {"id": cleaning_run})["runOrError"]
    assert run["pipelineName"] == job and run["repositoryOrigin"], run
    page.goto(f"{server.url}/overview/activity/timeline")
    page.locator(f'a[href$="/jobs/{job}"]').first.wait_for(timeout=LOAD_TIMEOUT_MS)  # the job's row, by its link
    page.wait_for_timeout(1000)  # the run bars draw after the rows
    screenshot(page, "overview_timeline")


def automation_toggle(page, name: str):
    """The on/off switch of a sensor or schedule on the automation page (a row's first checkbox selects it)."""
    row = page.locator("div[data-index]", has=page.locator("a", has_text=name)).first
    row.wait_for(timeout=LOAD_TIMEOUT_MS)
    return row.locator("input[type=checkbox]").last


def test_automation_sensor_runs_on_a_fresh_instance(server, page):
    """Nobody switched it on: declared RUNNING, and the daemon `dagster dev` starts ticks it."""
    page.goto(f"{server.url}/automation")
    from playwright.sync_api import expect

    # the switches draw off until the instigator states load: wait for the sensor's, then read the rest
    expect(automation_toggle(page, AUTOMATION_SENSOR)).to_be_checked(timeout=LOAD_TIMEOUT_MS)
    assert not automation_toggle(page, NIGHTLY_SCHEDULE).is_checked()  # the nightly chain is opt-in
    screenshot(page, "automation_list")

    page.locator("a", has_text=AUTOMATION_SENSOR).first.click()  # its page: status and the daemon's ticks
    page.get_by_text("Running", exact=True).first.wait_for()
    page.get_by_text("Latest tick").first.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.get_by_text("requested").first.wait_for(timeout=LOAD_TIMEOUT_MS)
    screenshot(page, "automation_sensor")


def test_data_report_headline_plot_and_shared_bins_without_a_click(server, page, defs, cleaning_run):
    assert wait_for_run(server, cleaning_run, CLEANING_TIMEOUT_S) == dg.DagsterRunStatus.SUCCESS
    report_run = submit_stage_run(server, defs, ["data_report"], CLEANED_PARTITION)
    assert wait_for_run(server, report_run, CLEANING_TIMEOUT_S) == dg.DagsterRunStatus.SUCCESS
    reports = Path(server.home).parent / "storage" / "reports"
    built = json.loads((reports / CLEANED_PARTITION / "report.json").read_text())
    kept, rejected = built["length_histogram"]["kept"], built["length_histogram"]["rejected"]
    assert kept and rejected  # dirty_web keeps and rejects: both histograms are drawn
    assert [(b["from"], b["to"]) for b in kept] == [(b["from"], b["to"]) for b in rejected]  # shared bins

    page.goto(f"{server.url}/assets/data_report?partition={CLEANED_PARTITION}")
    assert metadata_value(page, "kept") == str(built["kept"])  # the headline numbers, on the page
    plot = metadata_row(page, "funnel_plot")  # the funnel as text bars, drawn inline: no click
    assert plot.get_by_text("[Show Markdown]").count() == 0
    assert "█" in plot.locator("table").first.inner_text()
    lengths = metadata_row(page, "lengths")  # numeric bins, one row each, kept beside rejected
    first = [c.strip() for c in lengths.locator("tr").nth(1).locator("td").all_inner_texts()]
    assert [int(first[0]), int(first[1])] == [kept[0]["from"], kept[0]["to"]]
    screenshot(page, "data_report_summary")
    stored = latest_metadata(server, "data_report")
    assert list(stored)[:6] == ["records_in", "kept", "rejected", "quarantined", "kept_share", "funnel_plot"]
    json_rows = [k for k in stored if isinstance(stored[k], (dict, list)) and k != "provenance"]
    assert not json_rows, f"raw JSON metadata on data_report: {json_rows}"
    shown_json = page.locator("tr", has=page.get_by_text("[Show JSON]", exact=True))
    assert all(row.locator("td").first.inner_text().strip() == "provenance" for row in shown_json.all())


def sensor_ticks(server, name: str) -> list[dict]:
    """The daemon's ticks of sensor `name`, newest first, as the UI's tick history reads them."""
    query = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { __typename
        ... on Sensor { sensorState { ticks(limit: 20) { status skipReason runIds } } } } }"""
    selector = {"repositoryLocationName": "marin_assets.definitions:defs", "repositoryName": "__repository__",
                "sensorName": name}
    answer = graphql(server, query, {"s": selector})["sensorOrError"]
    assert answer["__typename"] == "Sensor", answer
    return answer["sensorState"]["ticks"]


def test_opening_the_ui_after_the_quickstart_starts_nothing(server, page):
    """Every source was ingested before the server started (as the quickstart leaves it): the source
    sensor, on by default, ticks twice and requests no run."""
    deadline = time.monotonic() + 420  # 60 s between ticks, on a loaded machine
    while len(ticks := [t for t in sensor_ticks(server, SOURCE_SENSOR) if t["status"] != "STARTED"]) < 2:
        assert time.monotonic() < deadline, f"fewer than two ticks of {SOURCE_SENSOR}: {ticks}"
        time.sleep(5)
    assert all(t["status"] == "SKIPPED" and not t["runIds"] for t in ticks), ticks
    with dg.DagsterInstance.from_config(str(server.home)) as instance:
        launched = instance.get_runs(dg.RunsFilter(tags={"dagster/sensor_name": SOURCE_SENSOR}))
    assert not launched, [r.run_id for r in launched]
    page.goto(f"{server.url}/automation")
    page.locator("a", has_text=SOURCE_SENSOR).first.click(timeout=LOAD_TIMEOUT_MS)
    page.get_by_text("Latest tick").first.wait_for(timeout=LOAD_TIMEOUT_MS)  # its page: the ticks it skipped
    screenshot(page, "source_sensor_ticks")
