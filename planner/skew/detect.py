"""Checks on --keys that need no Spark: the input format of a local path and its key column, found in milliseconds
instead of after Spark's start-up.

* `detect_format`: without --input-format, a local file (or a directory's data files) is Parquet when it starts with
  Parquet's magic `PAR1`, else named by its suffix (.csv, .json / .jsonl / .ndjson, .txt / .text); anything else is
  refused with the options to choose from. With --input-format parquet, a local file without the magic is refused.
  Remote paths (hdfs://, s3a://, ...) are left to Spark (Parquet unless told).
* `check_key_column`: the key column of a local Parquet file (its schema) or CSV file (its header line) must exist.
  JSON columns come from every record, so they are left to Spark.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from urllib.parse import urlparse

from planner.model import PlannerError

PARQUET_MAGIC = b"PAR1"
SUFFIXES = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".txt": "text",
    ".text": "text",
    ".parquet": "parquet",
    ".parq": "parquet",
}
FORMATS = ("parquet", "csv", "json", "text")


def local_path(keys: str) -> Path | None:
    """The local file or directory --keys names, or None (remote, or a glob pattern left to Spark)."""
    parsed = urlparse(keys)
    if parsed.scheme not in ("", "file"):
        return None
    local = parsed.path if parsed.scheme == "file" else keys
    if any(ch in local for ch in "*?[{"):
        return None
    return Path(local)


def _data_files(path: Path) -> list[Path]:
    """A directory's data files as Spark lists them: no hidden (`.`) or metadata (`_`) files, sorted."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
    )


def _is_parquet(file: Path) -> bool:
    try:
        with open(file, "rb") as fh:
            return fh.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def detect_format(keys: str, given: str | None) -> str:
    """The input format to read --keys with: `given` when set (checked for local Parquet), else detected."""
    path = local_path(keys)
    files = _data_files(path) if path is not None else []
    if given:
        if given not in FORMATS:
            raise PlannerError(f"--input-format {given!r}: use one of {', '.join(FORMATS)}")
        if given == "parquet" and files and not _is_parquet(files[0]):
            guess = SUFFIXES.get(files[0].suffix.lower())
            hint = f"--input-format {guess}" if guess and guess != "parquet" else "--input-format csv, json or text"
            raise PlannerError(f"--keys {files[0]}: not a Parquet file (no PAR1 magic); give {hint}")
        return given
    if path is None or not files:
        return "parquet"
    if _is_parquet(files[0]):
        return "parquet"
    found = SUFFIXES.get(files[0].suffix.lower())
    if found == "parquet":
        raise PlannerError(
            f"--keys {files[0]}: not a Parquet file (no PAR1 magic); "
            "give --input-format csv, json or text if it is one of those"
        )
    if found:
        return found
    raise PlannerError(
        f"--keys {files[0]}: cannot tell its format (not Parquet, no .csv/.json/.txt suffix); "
        "give --input-format csv, json or text"
    )


def _csv_header(file: Path) -> list[str] | None:
    try:
        with open(file, "rb") as fh:
            first = fh.readline(1 << 20)
    except OSError:
        return None
    text = first.decode("utf-8", errors="replace").rstrip("\r\n")
    if not text:
        return None
    return next(csv.reader(io.StringIO(text)), None)


def _parquet_columns(file: Path) -> list[str] | None:
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(file).names)
    except Exception:  # unreadable here: Spark reads it and reports
        return None


def check_key_column(keys: str, input_format: str, column: str) -> None:
    """Raise when a local Parquet / CSV input has no column `column` (names as Spark shows them)."""
    path = local_path(keys)
    files = _data_files(path) if path is not None else []
    if not files or input_format not in ("parquet", "csv"):
        return
    columns = _parquet_columns(files[0]) if input_format == "parquet" else _csv_header(files[0])
    if columns is None or column in columns:
        return
    raise PlannerError(f"--key-column {column!r} not found in {keys}; its columns are: {', '.join(columns)}")


def require_pyspark() -> None:
    """One line instead of an ImportError traceback when PySpark (or PyArrow) is not installed."""
    import importlib.util
    import sys

    missing = []
    for module in ("pyspark", "pyarrow"):  # found, not imported: importing PySpark costs ~0.4 s the in-process path
        found = sys.modules[module] is not None if module in sys.modules else importlib.util.find_spec(module)
        if not found:  # (planner.skew.local) does not need
            missing.append(module)
    if missing:
        raise PlannerError(
            f"skew runs on Spark and needs {' and '.join(missing)}, which is not installed: "
            "pip install 'kafka-planner[spark]'"
        )
