"""`skew --plot FILE` (.png or .svg): records per partition, as the topic holds them and as Kafka's partitioner would
place the same keys, the hot keys labelled, the imbalance figures in the title. matplotlib (the `plot` extra) is
imported here only, with its file-only Agg backend (no display needed)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from planner.model import PlannerError

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 5.0, 100  # a PNG of 1000 x 500 pixels; an SVG of 720 x 360 pt


def _figures(loads) -> str:
    from planner.skew.imbalance import skew

    s = skew(loads)
    if s.max_over_mean is None:
        return "no records"
    return f"max/mean {s.max_over_mean:.3f}, CV {s.cv:.3f}, Gini {s.gini:.3f}"


def _label(ax, text: str, x: float, y: float) -> None:
    ax.annotate(
        text, (x, y), ha="center", va="bottom", fontsize=7, rotation=90, xytext=(0, 2), textcoords="offset points"
    )


def draw(path: str, real, report) -> None:
    """Write the picture to `path` (whole: a temporary file beside it, renamed when written)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise PlannerError(f"--plot {path}: give a .png or .svg file name")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlannerError(
            "--plot needs matplotlib, which is not installed: pip install 'kafka-planner[plot]'"
        ) from None
    real_loads = [p.records for p in real.per_partition] if real is not None else []
    predicted = [p.records for p in report.per_partition]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    try:
        width = 0.4
        title = []
        if real_loads:
            xs = list(range(len(real_loads)))
            ax.bar([x - width / 2 for x in xs], real_loads, width, label=f"in the topic ({len(real_loads)} partitions)")
            title.append(f"topic: {_figures(real_loads)}")
            for p in real.per_partition:
                if p.hot_keys:
                    key, count = p.hot_keys[0]
                    _label(ax, f"{key[:24]} ({count:,})", p.partition - width / 2, p.records)
        xs2 = list(range(len(predicted)))
        ax.bar([x + width / 2 for x in xs2], predicted, width, label=f"murmur2, {len(predicted)} partitions")
        title.append(f"murmur2 x {len(predicted)}: {_figures(predicted)}")
        for k in report.top[:5]:
            _label(ax, k.key[:24], k.partition + width / 2, predicted[k.partition])
        ax.set_xlabel("partition")
        ax.set_ylabel("records")
        ax.set_title(f"{report.source}\n" + "; ".join(title), fontsize=9)
        ax.legend(fontsize=8)
        ax.margins(y=0.25)
        fd, tmp = tempfile.mkstemp(prefix=".plot-", suffix=suffix, dir=target.parent if str(target.parent) else ".")
        os.close(fd)
        try:
            fig.savefig(tmp, format=suffix[1:], dpi=DPI)
            os.replace(tmp, target)
        except OSError as exc:
            os.unlink(tmp)
            raise PlannerError(f"--plot {path}: cannot write it ({exc.strerror or exc})") from None
    except FileNotFoundError:
        raise PlannerError(f"--plot {path}: its directory does not exist") from None
    finally:
        plt.close(fig)
