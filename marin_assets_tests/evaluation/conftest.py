"""The evaluation tests share one tiny trained run (training it costs ~1 minute)."""

import pytest

from marin_assets_tests.evaluation.trained_run import train_tiny_run


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
    return train_tiny_run(tmp_path_factory.mktemp("trained"))
