"""`skew`: run real keys through Kafka's partitioner on Spark and show the skew per partition and per broker."""

from __future__ import annotations

import enum
from typing import List, Optional

import typer

from planner.cli.app import app
from planner.cli.common import OFFLINE, OPTIONAL_TOPOLOGY


class InputFormat(str, enum.Enum):
    parquet = "parquet"
    csv = "csv"
    json = "json"
    text = "text"


class SkewKeyType(str, enum.Enum):
    string = "string"
    int = "int"
    long = "long"
    bytes_hex = "bytes-hex"


class Reader(str, enum.Enum):
    auto = "auto"
    pyarrow = "pyarrow"
    spark = "spark"


class SkewFormat(str, enum.Enum):
    table = "table"
    json = "json"


SKEW_HELP = """Key distribution and skew of a topic, from real keys, on Spark (local[*] by default).

Every key is serialized as Kafka's producer does (--key-type) and placed with
toPositive(murmur2(key)) % partitions. Shows records and bytes per partition, per broker
as leader and as replica (with --topology), max/mean, coefficient of variation and Gini,
the top keys, and null / unreadable rows. --sweep evaluates several partition counts in
one pass and recommends the smallest whose max/mean stays at most --max-skew.
"""


@app.command(help=SKEW_HELP)
def skew(
    source: Optional[str] = typer.Argument(
        None,
        metavar="[kafka://BOOTSTRAP/TOPIC]",
        help="A live topic: its records are read with Spark's Kafka source (make skew-jars).",
    ),
    keys: Optional[str] = typer.Option(
        None, "--keys", metavar="PATH", help="Any path Spark reads: file, directory, hdfs://, s3a://."
    ),
    command_config: Optional[str] = typer.Option(
        None,
        "--command-config",
        metavar="FILE",
        help="Kafka client properties for a kafka:// topic (as Kafka's tools).",
    ),
    start: Optional[str] = typer.Option(
        None, "--from", help="Topic: earliest (default), an offset, a UTC time (2026-12-05T10:00:00Z) or NNNms."
    ),
    end: Optional[str] = typer.Option(
        None, "--to", help="Topic: latest (default), an offset (exclusive), a UTC time or NNNms."
    ),
    plot: Optional[str] = typer.Option(
        None, "--plot", metavar="FILE", help="Draw records per partition to FILE (.png or .svg; the plot extra)."
    ),
    input_format: Optional[InputFormat] = typer.Option(
        None,
        "--input-format",
        help="Default: detected for a local path (Parquet by its PAR1 magic, else .csv/.json/.txt), else parquet.",
    ),
    key_column: Optional[str] = typer.Option(None, "--key-column", help="Key column [default: key; value for text]."),
    value_bytes_column: Optional[str] = typer.Option(
        None,
        "--value-bytes-column",
        metavar="COL",
        help="Value size per record: an integer column (bytes), text of an integer (CSV), or a binary column "
        "(the value itself: its length).",
    ),
    key_type: SkewKeyType = typer.Option(SkewKeyType.string, "--key-type", help="Kafka serializer of the key."),
    partitions: Optional[int] = typer.Option(None, "--partitions", max=2**31 - 1, help="Partitions of the topic."),
    topology: Optional[str] = OPTIONAL_TOPOLOGY,
    topic: Optional[str] = typer.Option(None, "--topic", help="The topic in --topology."),
    offline_brokers: Optional[str] = OFFLINE,
    sweep: Optional[str] = typer.Option(
        None, "--sweep", metavar="N,N,...", help="Partition counts to compare, e.g. 6,12,24,48."
    ),
    max_skew: float = typer.Option(1.2, "--max-skew", help="Largest acceptable records max/mean for --sweep."),
    top: int = typer.Option(
        20, "--top", min=0, max=1_000_000, help="How many top keys to show (0: skip the per-key count)."
    ),
    exact_top: bool = typer.Option(
        False,
        "--exact-top",
        help="Rank the top keys by a group-by over every key (default: a hot-key "
        "summary in the same pass, exact counts of the candidates, a proven bound "
        "for the rest).",
    ),
    master: str = typer.Option("local[*]", "--master", help="Spark master: local[*], spark://host:7077, yarn, ..."),
    output: Optional[str] = typer.Option(
        None, "--output", metavar="DIR", help="Write partitions.parquet, keys.parquet and summary.json here."
    ),
    reader: Reader = typer.Option(
        Reader.auto,
        "--reader",
        help="auto: Spark reads and murmur2 runs in the JVM (the Java UDF); without it, pyarrow reads "
        "Parquet row groups inside Spark tasks when it can (local/shared file system, key column stored as the "
        "key type), else Spark reads and hands Arrow batches to Python (spark). pyarrow: always pyarrow and NumPy.",
    ),
    spark_conf: Optional[List[str]] = typer.Option(
        None, "--spark-conf", metavar="KEY=VALUE", help="Repeatable Spark setting, e.g. spark.executor.memory=4g."
    ),
    fmt: SkewFormat = typer.Option(SkewFormat.table, "--format"),
    verbose: bool = typer.Option(False, "--verbose", help="Show Spark's own logging."),
) -> None:
    from planner.model import PlannerError
    from planner.skew import command

    if bool(source) == bool(keys):
        raise PlannerError("give --keys PATH or a topic kafka://BOOTSTRAP/TOPIC (one of them)")
    if source and not source.startswith("kafka://"):
        raise PlannerError(f"{source}: a topic is kafka://BOOTSTRAP/TOPIC; files are read with --keys PATH")
    command.run(
        keys=source or keys,
        command_config=command_config,
        start=start,
        end=end,
        plot=plot,
        input_format=input_format.value if input_format else None,
        key_column=key_column,
        value_bytes_column=value_bytes_column,
        key_type=key_type.value,
        partitions=partitions,
        topology=topology,
        topic=topic,
        offline_brokers=offline_brokers,
        sweep=sweep,
        max_skew=max_skew,
        top=top,
        exact_top=exact_top,
        master=master,
        spark_conf=list(spark_conf or []),
        reader=reader.value,
        output=output,
        fmt=fmt.value,
        verbose=verbose,
    )
