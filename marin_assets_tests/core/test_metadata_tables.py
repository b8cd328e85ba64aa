"""metadata_table: a real Dagster table value with typed columns and figures rounded for reading."""

import dagster as dg

from marin_assets.core.metadata_tables import counts_table, metadata_table, round_sig


def test_rows_become_typed_columns_with_rounded_floats():
    table = metadata_table([{"source": "a", "weight": 0.123456789, "tokens": 10, "ok": True},
                            {"source": "b", "weight": 2.0, "tokens": 20, "ok": False}])
    assert isinstance(table, dg.TableMetadataValue)
    assert [(c.name, c.type) for c in table.schema.columns] == [
        ("source", "string"), ("weight", "float"), ("tokens", "int"), ("ok", "bool")]
    assert table.records[0].data == {"source": "a", "weight": 0.1235, "tokens": 10, "ok": True}


def test_counts_table_is_sorted_largest_first_and_round_sig_leaves_non_floats_alone():
    table = counts_table({"c4:x": 2, "gopher:y": 9, "a": 2})
    assert [r.data["rule"] for r in table.records] == ["gopher:y", "a", "c4:x"]
    assert round_sig(123456.789, 3) == 123000.0 and round_sig("text") == "text" and round_sig(7) == 7
    assert round_sig(float("nan")) != round_sig(float("nan"))  # NaN passes through unchanged
