"""ppaudit.io.write_figure_outputs: the pdf/png/csv triplet of a figure target, the same bytes
as the three calls it replaces in the plot scripts, and nothing left behind on a failure."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ppaudit.io import save_figure, write_csv, write_figure_outputs  # noqa: E402


def _fig():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.1, 0.4, 0.2])
    return fig, pd.DataFrame({"order": [1, 2, 3], "rdp": [0.1, 0.4, 0.2]})


def test_same_bytes_as_the_three_calls(tmp_path):
    fig, table = _fig()
    out = SimpleNamespace(**{k: tmp_path / f"a.{k}" for k in ("pdf", "png", "csv")})
    write_figure_outputs(fig, table, out)
    save_figure(fig, tmp_path / "b.pdf")
    save_figure(fig, tmp_path / "b.png")
    write_csv(table, tmp_path / "b.csv")
    for k in ("pdf", "png", "csv"):
        assert (tmp_path / f"a.{k}").read_bytes() == (tmp_path / f"b.{k}").read_bytes(), k
    write_figure_outputs(fig, table, {k: tmp_path / f"c.{k}" for k in ("pdf", "png", "csv")})  # a mapping works too
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    plt.close(fig)


def test_missing_output_is_named(tmp_path):
    fig, table = _fig()
    with pytest.raises(KeyError, match="png"):
        write_figure_outputs(fig, table, {"pdf": tmp_path / "x.pdf", "csv": tmp_path / "x.csv"})
    plt.close(fig)
