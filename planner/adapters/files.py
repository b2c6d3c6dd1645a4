"""Write files so that a failure never leaves a partial file behind: temp file in the same folder, then rename."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_files_atomic(directory: str | os.PathLike, files: Mapping[str, str]) -> list[Path]:
    """Write several files; each appears whole or not at all. Call only once the plan has succeeded."""
    written = []
    for name, text in files.items():
        path = Path(directory) / name
        write_text_atomic(path, text)
        written.append(path)
    return written
