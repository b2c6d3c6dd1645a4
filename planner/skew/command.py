"""`kafka-planner skew`: validate the options, run the Spark job, build and render the report, write --output."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from planner.adapters import secrets
from planner.model import PlannerError
from planner.skew.sweep import parse_sweep


def _progress(message: str) -> None:
    print(f"skew: {message}", file=sys.stderr, flush=True)


def _silent(message: str) -> None:
    pass


_SPARK_KEY = re.compile(r"spark\.[A-Za-z0-9_.\-]{1,200}")


def parse_spark_conf(items) -> dict[str, str]:
    """KEY=VALUE settings. A bad item is named by its key alone (`spark.hadoop.fs.s3a.secret.key SECRET` would show
    the secret), and the values of secret keys are remembered so that no error shows them."""
    conf = {}
    for number, item in enumerate(items, 1):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            first = item.split()[0] if item.split() else ""
            named = f" {first}" if _SPARK_KEY.fullmatch(first) else ""
            raise PlannerError(
                f"--spark-conf (item {number}{named}): use KEY=VALUE, e.g. --spark-conf spark.executor.memory=4g "
                "(the item is not shown: it may hold a secret)"
            )
        if secrets.is_secret_key(key):
            secrets.remember(value)
        conf[key.strip()] = value
    return conf


def _write_partitions_parquet(report, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {
        "partition": pa.array([p.partition for p in report.per_partition], pa.int32()),
        "records": pa.array([p.records for p in report.per_partition], pa.int64()),
        "bytes": pa.array([p.bytes for p in report.per_partition], pa.int64()),
    }
    if report.topic:
        cols["leader"] = pa.array([p.leader for p in report.per_partition], pa.int32())
        cols["replicas"] = pa.array([list(p.replicas) for p in report.per_partition], pa.list_(pa.int32()))
    pq.write_table(pa.table(cols), path)


def _publish(staging: Path, out: Path) -> None:
    """Move the finished files from `staging` (a folder inside `out`) into `out` as one set: an earlier folder in the
    way (keys.parquet) is renamed into `staging` first, which its caller removes afterwards, so no step deletes
    anything; the caller holds Ctrl-C and SIGTERM back meanwhile. Before, an interrupt between the moves left the new
    keys.parquet beside the earlier summary.json, or an earlier keys.parquet deleted and no new one in its place."""
    for item in sorted(p for p in staging.iterdir() if not p.name.startswith(".")):
        target = out / item.name
        if os.path.lexists(target) and (target.is_dir() or item.is_dir()) and not target.is_symlink():
            os.rename(target, staging / f".earlier-{item.name}")
        os.replace(item, target)


def _count_on_spark(spec, master: str, verbose: bool, conf, progress, staging: Path | None, output):
    """The job's counts from Spark; with `staging`, keys.parquet written there (a write the file system refuses is
    one line naming --output)."""
    from planner.skew import job
    from planner.skew.spark import session

    progress(f"starting Spark ({master})")
    with session(master, verbose, conf, jars=[spec.udf_jar] if spec.udf_jar else []) as spark:
        try:
            return job.run(spark, spec, progress, output_keys=str(staging / "keys.parquet") if staging else None)
        except job.KeysWriteFailed as exc:
            raise _write_failed(str(output), OSError(0, exc.args[0])) from None


def _write_output(report, staging: Path, out_dir: Path, output: str) -> bool:
    """partitions.parquet and summary.json written beside keys.parquet in `staging`, then the set moved into
    `out_dir` with Ctrl-C and SIGTERM held back; True once it is there."""
    import json

    from planner.adapters.files import signals_held
    from planner.skew.render import summary

    try:
        _write_partitions_parquet(report, staging / "partitions.parquet")
        (staging / "summary.json").write_text(json.dumps(summary(report), indent=2) + "\n", encoding="utf-8")
        with signals_held():
            _publish(staging, out_dir)
            return True
    except OSError as exc:
        raise _write_failed(output, exc) from None


def _write_failed(output: str, exc: OSError) -> PlannerError:
    """An --output file that could not be written (pyarrow words an errno as text): one line naming the folder."""
    from planner.skew.job import write_failure

    reason = exc.strerror or write_failure(str(exc)) or str(exc)
    return PlannerError(
        f"--output {output}: {reason}; nothing was written there (free space, or choose another folder)"
    )


def _with_udf(spec, progress):
    """`spec` with the murmur2 UDF jar (compiled on first use); without one, a one-line note and the Python path."""
    from dataclasses import replace

    from planner.skew.jvmhash import compile_jar

    compiled = compile_jar(progress=progress)
    if compiled.jar is None:
        print(f"skew: note: {compiled.note}; murmur2 runs in Python (Arrow/NumPy) instead of the JVM", file=sys.stderr)
        return spec
    return replace(spec, udf_jar=compiled.jar)


def _count_in_process(spec, master: str, output, reader: str, engine: str, progress):
    """The job's counts from this process (`planner.skew.local`) when `--engine auto` finds the input small and
    simple enough for the same report without Spark, with one note line saying so; else None (Spark counts)."""
    if engine == "spark" or reader != "auto":
        return None
    if engine != "auto":
        raise PlannerError(f"--engine {engine!r}: use auto or spark")
    from planner.skew import local

    files = local.eligible(spec, master, output)
    if files is None:
        return None
    counts = local.count(files, spec)
    if counts is None:
        progress(
            f"{spec.keys} has more distinct keys than the hot-key summary's {spec.heavy_k:,} counters: Spark counts "
            "it (its bound on the unlisted keys comes from its tasks' summaries)"
        )
        return None
    print(
        f"skew: note: {spec.keys} ({counts.rows:,} rows) counted in this process: faster than starting Spark "
        "(--engine spark to run it on Spark)",
        file=sys.stderr,
        flush=True,
    )
    return counts


def run(**options) -> None:
    """The command, with SIGTERM handled as Ctrl-C (one line, exit 130, the JVM and its workers stopped) and, on
    Linux, this process as the reaper of orphaned descendants, so none escapes the clean-up."""
    import signal

    from planner.skew.spark import become_subreaper, stop_on_sigterm

    become_subreaper()
    previous = stop_on_sigterm()
    try:
        _run(**options)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(**options) -> None:
    from planner.skew.kafkasource import is_topic_url

    if is_topic_url(options["keys"]):
        _run_topic(**options)
        return
    for option in ("command_config", "start", "end"):
        if options.get(option):
            name = {"command_config": "--command-config", "start": "--from", "end": "--to"}[option]
            raise PlannerError(f"{name} is for a topic (kafka://bootstrap/topic), not --keys files")
    options.pop("command_config", None), options.pop("start", None), options.pop("end", None)
    _run_files(**options)


def _run_topic(
    *,
    keys,
    key_type,
    partitions,
    topology,
    topic,
    sweep,
    max_skew,
    top,
    master,
    output,
    fmt,
    verbose,
    spark_conf=(),
    command_config=None,
    start=None,
    end=None,
    plot=None,
    exact_top=False,
    **ignored,
) -> None:
    """`skew kafka://bootstrap/topic`: the topic's records as they are, per partition, and beside them what Kafka's
    partitioner does with the same keys under --partitions N (default: the topic's count)."""
    from dataclasses import replace

    from planner.skew import kafkasource as ks
    from planner.skew.detect import require_pyspark
    from planner.skew.job import JobSpec
    from planner.skew.render import render_table, render_topic, summary
    from planner.skew.report import build_report
    from planner.skew.sweep import evaluate_sweep

    progress = _progress if verbose or sys.stderr.isatty() else _silent
    for option, value in (("--topology", topology), ("--topic", topic), ("--output", output)):
        if value:
            raise PlannerError(f"{option} is for --keys files; a kafka:// source names its topic in the URL")
    if key_type not in ("string", "bytes-hex"):
        raise PlannerError(
            f"--key-type {key_type}: a topic's keys are hashed as the bytes they are; show them as string or "
            "bytes-hex (int / long keys hash exactly as bytes-hex)"
        )
    url = ks.parse_topic_url(keys)
    rng = ks.parse_range(start, end)
    sweep_counts = parse_sweep(sweep)
    evaluate_sweep({}, {}, max_skew)
    client = ks.client_properties(command_config)
    conf = parse_spark_conf(spark_conf)
    require_pyspark()
    jars = ks.source_jars()
    real_n = ks.partition_count(url, command_config)
    n = partitions or real_n
    spec = JobSpec(
        keys=url.url,
        input_format="kafka",
        key_column="key",
        value_bytes_column="_value_bytes",
        key_type=key_type,
        counts=tuple(sorted(set((n,) + sweep_counts))),
        primary=n,
        top=top,
        exact_top=exact_top,
    )
    spec = _with_udf(spec, progress)
    from planner.skew.jvmhash import register
    from planner.skew.spark import session

    progress(f"starting Spark ({master})")
    with session(master, verbose, conf, jars=jars + ([spec.udf_jar] if spec.udf_jar else [])) as spark:
        jvm = bool(spec.udf_jar) and register(spark, spec.udf_jar)
        progress(f"reading {url.url} ({rng.describe()}) with Spark's Kafka source")
        real, counts = ks.count_topic(spark, url, real_n, rng, client, replace(spec, reader="spark"), jvm, progress)
    real_counts = ks.TopicCounts(url.url, url.topic, real_n, rng.describe(), tuple(real))
    report = build_report(
        counts,
        source=url.url,
        key_column="key",
        key_type=key_type,
        partitions=n,
        sweep_counts=sweep_counts,
        max_skew=max_skew,
        cluster=None,
        topic=None,
    )
    if plot:
        from planner.skew.plot import draw

        draw(plot, real_counts, report)
    if fmt == "json":
        import json

        doc = summary(report)
        doc["topic_records"] = ks.topic_summary(real_counts)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_topic(real_counts, n) + render_table(report))
    sys.stdout.flush()


def _run_files(
    *,
    keys,
    input_format,
    key_column,
    value_bytes_column,
    key_type,
    partitions,
    topology,
    topic,
    offline_brokers,
    sweep,
    max_skew,
    top,
    master,
    exact_top=False,
    output,
    fmt,
    verbose,
    spark_conf=(),
    reader="auto",
    plot=None,
    engine="auto",
) -> None:
    from planner.skew.detect import check_key_column, detect_format, require_pyspark
    from planner.skew.job import JobSpec, check_local_path, key_column_of
    from planner.skew.render import render_json, render_table
    from planner.skew.report import build_report
    from planner.skew.sweep import evaluate_sweep

    progress = _progress if verbose or sys.stderr.isatty() else _silent
    from planner.adapters.source import partitions_or_topic

    if secrets.has_userinfo(keys):  # Hadoop 3 refuses inline S3 logins too (S3xLoginHelper)
        raise PlannerError(
            f"--keys {secrets.mask_userinfo(keys)}: do not put credentials in the path; set them with --spark-conf "
            "(spark.hadoop.fs.s3a.access.key=..., spark.hadoop.fs.s3a.secret.key=...) or the environment"
        )
    conf = parse_spark_conf(spark_conf)
    n, cluster = partitions_or_topic(partitions, topology, topic, offline_brokers)
    sweep_counts = parse_sweep(sweep)
    if top < 0:
        raise PlannerError(f"--top must be 0 or more, got {top}")
    evaluate_sweep({}, {}, max_skew)  # validates --max-skew before Spark starts
    check_local_path(keys)
    input_format = detect_format(keys, input_format)
    spec = JobSpec(
        keys=keys,
        input_format=input_format,
        key_column=key_column,
        value_bytes_column=value_bytes_column,
        key_type=key_type,
        counts=tuple(sorted(set((n,) + sweep_counts))),
        primary=n,
        top=top,
        reader=reader,
        exact_top=exact_top,
    )
    check_key_column(keys, input_format, key_column_of(spec))
    require_pyspark()
    counted = _count_in_process(spec, master, output, reader, engine, progress)
    if counted is None:
        spec = _with_udf(spec, progress)
    out_dir = staging = None
    created: list[Path] = []  # directories of --output this run made (removed again if it fails)
    if output:
        out_dir = Path(output)
        if out_dir.exists() and not out_dir.is_dir():
            raise PlannerError(f"--output {output}: exists and is not a directory")
        created = [d for d in (out_dir, *out_dir.parents) if not d.exists()]
        from planner.adapters.files import lock_folder

        lock_folder(output, "--output")  # a second skew writing the same folder refuses
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".skew-", dir=out_dir))
        except OSError as exc:
            raise PlannerError(f"--output {output}: cannot write there ({exc.strerror or exc})") from None
    published = False
    try:
        if counted is not None:
            counts = counted
        else:
            counts = _count_on_spark(spec, master, verbose, conf, progress, staging, output)
        report = build_report(
            counts,
            source=keys,
            key_column=key_column_of(spec),
            key_type=key_type,
            partitions=n,
            sweep_counts=sweep_counts,
            max_skew=max_skew,
            cluster=cluster,
            topic=topic,
        )
        if staging and out_dir:
            published = _write_output(report, staging, out_dir, str(output))
            progress(f"wrote {out_dir / 'partitions.parquet'}, {out_dir / 'keys.parquet'}, {out_dir / 'summary.json'}")
    finally:
        if staging and staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if not published:
            if created:  # the lock file lies in the folder's parent, which this run may have made too
                from planner.adapters.files import release_folder_locks

                release_folder_locks()
            for directory in created:  # innermost first; only if still empty
                try:
                    directory.rmdir()
                except OSError:
                    break
    if plot:
        from planner.skew.plot import draw

        draw(plot, None, report)
    sys.stdout.write(render_json(report) if fmt == "json" else render_table(report))
    sys.stdout.flush()
