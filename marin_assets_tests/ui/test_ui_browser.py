"""The Dagster UI in headless Chromium (Playwright) against `dagster dev` on 127.0.0.1.

One server per module (~30-120 s to start). Screenshots land in test-artifacts/ui/ (git-ignored)
for a person to look at; the assertions are about what the page shows and what the run did.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import dagster as dg
import pytest

from marin_assets_tests.dagster_dev import REPO_ROOT, dagster_dev
from marin_assets_tests.ui.plot_materializations import (
    SCALING_PLOT_ASSET,
    SCALING_PLOT_KEY,
    TRAINING_PLOT_ASSET,
    training_run_metadata,
    write_scaling_suite,
)

pytestmark = pytest.mark.slow

CHROMIUM = Path(os.environ.get("MARIN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "ui"
STAGE_GROUPS = {"data", "tokenize", "train", "governance"}
CHEAP_ASSET, CHEAP_PARTITION = "raw_corpus", "debian_licenses"
LOAD_TIMEOUT_MS = 180_000  # the first page waits for the code location to load on a busy 2-core machine
RUN_TIMEOUT_S = 240

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} not installed (Debian: apt-get install chromium; .ci/run installs it)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from marin_assets.definitions import defs

    return defs


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("ui")
    env = {"MARIN_ENV": "local", "MARIN_STORAGE_ROOT": str(base / "storage"),
           "MARIN_SCALING_RECIPE": str(write_scaling_suite(base / "scaling_suite.yaml", base / "storage"))}
    with dagster_dev(base / "home", module="marin_assets.definitions", attribute="defs", env=env) as running:
        yield running


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


def test_asset_graph_shows_every_stage_group(server, page, defs):
    expected = stage_groups(defs)
    assert STAGE_GROUPS <= expected
    page.goto(f"{server.url}/asset-groups")
    for group in sorted(expected):  # each group is listed left of the graph and drawn in it
        page.get_by_text(group, exact=True).first.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # let the graph lay out before the picture
    assert screenshot(page, "asset_groups").stat().st_size > 10_000


def wait_for_run(server, run_id: str) -> dg.DagsterRunStatus:
    from dagster_graphql import DagsterGraphQLClient

    client = DagsterGraphQLClient("127.0.0.1", port_number=server.port)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        status = client.get_run_status(run_id)
        if status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
            return status
        time.sleep(2)
    raise AssertionError(f"run {run_id} still {status} after {RUN_TIMEOUT_S} s; server log: {server.log}")


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
    dialog.get_by_text("Select a partition or create one").click()
    page.get_by_role("menuitem").filter(has_text=CHEAP_PARTITION).click()
    page.keyboard.press("Escape")  # closes the partition list, not the dialog
    dialog.get_by_role("button", name="Launch 1 run").click()

    assert follow_launched_run(server, page) == dg.DagsterRunStatus.SUCCESS
    screenshot(page, "materialize_run")
    inventory = Path(server.home).parent / "storage" / "raw" / CHEAP_PARTITION / "inventory.json"
    assert inventory.exists()  # the run really wrote the asset's output


def show_markdown_image(page, metadata_key: str):
    """Open a Markdown metadata value of the latest materialization; the <img> it renders, decoded."""
    page.locator("tr", has_text=metadata_key).get_by_text("[Show Markdown]").click(timeout=LOAD_TIMEOUT_MS)
    image = page.get_by_role("dialog").locator("img").first
    image.wait_for()
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    width, height = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width >= 300 and height >= 200  # a decoded plot, not a broken-image icon


def test_scaling_law_asset_shows_its_plot(server, page, defs):
    if not defs.resolve_asset_graph().has(dg.AssetKey(SCALING_PLOT_ASSET)):
        pytest.skip("scaling stage not wired")
    page.goto(f"{server.url}/assets/{SCALING_PLOT_ASSET}")
    page.locator("button", has_text="Materialize").first.click(timeout=LOAD_TIMEOUT_MS)
    # scaling_run's results were written as files, so Dagster warns that upstream was never materialized
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    assert follow_launched_run(server, page) == dg.DagsterRunStatus.SUCCESS

    page.goto(f"{server.url}/assets/{SCALING_PLOT_ASSET}")
    show_markdown_image(page, SCALING_PLOT_KEY)
    screenshot(page, "scaling_law_plot")


def test_training_run_page_renders_its_loss_curve(server, page, defs):
    """Reported, not trained: the metadata is what training_run's own report code returns."""
    key = dg.AssetKey(TRAINING_PLOT_ASSET)
    partition = defs.resolve_asset_graph().get(key).partitions_def.get_partition_keys()[0]
    plot_key, metadata = training_run_metadata()
    with dg.DagsterInstance.from_config(str(server.home)) as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition, metadata=metadata))

    page.goto(f"{server.url}/assets/{TRAINING_PLOT_ASSET}")
    show_markdown_image(page, plot_key)
    screenshot(page, "training_loss_curve")
