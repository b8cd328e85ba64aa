"""The Chinchilla points Besiroglu et al. (2024) extracted, as they fit them (see data/README.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

CSV = Path(__file__).parent / "data" / "chinchilla_svg_extracted_besiroglu2024.csv"
CSV_SHA256 = "193478df4e90f040016431996c45682659306840ecdadf83cfb9cd5ca0aa1b30"
# Besiroglu et al. (2024), Approach 3 on the 240 kept points.
PUBLISHED = {"A": 482.01, "B": 2085.43, "E": 1.8169, "alpha": 0.3478, "beta": 0.3658}
PUBLISHED_95CI = {"A": (285, 744), "B": (1042, 5810), "E": (1.769, 1.871), "alpha": (0.317, 0.373),
                  "beta": (0.331, 0.415)}


def chinchilla_points(drop_highest: int = 5) -> pd.DataFrame:
    """N, D = C / (6N), C, loss; without the `drop_highest` highest-loss runs (their `<` rule)."""
    raw = pd.read_csv(CSV)
    table = pd.DataFrame({"N": raw["Model Size"], "C": raw["Training FLOP"], "loss": raw["loss"]}).dropna()
    table["D"] = table["C"] / (6.0 * table["N"])
    if drop_highest:
        table = table[table["loss"] < np.sort(table["loss"].to_numpy())[-drop_highest]]
    return table.reset_index(drop=True)
