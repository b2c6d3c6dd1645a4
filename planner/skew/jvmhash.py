"""Kafka's murmur2 in the JVM: the Java UDFs of `udf/KafkaMurmur2.java`, compiled on first use and cached.

The source ships inside the package. On first use it is compiled with the machine's `javac` against the running
Spark's jars (PySpark's `jars/`, or `$SPARK_HOME/jars`) into a per-user cache,
`${XDG_CACHE_HOME:-~/.cache}/kafka-planner/udf/<key>/kafka-planner-udf.jar`, where the key is a hash of the source,
the Spark version and the class-file release. Compiling happens in a temporary directory beside the final one, which
is renamed into place, so concurrent runs never see half a jar. The jar is put on a new session's `spark.jars` (so a
cluster's executors fetch it) and the UDFs are registered with `spark.udf.registerJavaFunction`.

Without a JDK compiler (no `javac` on PATH or in `$JAVA_HOME/bin`, or `KAFKA_PLANNER_JAVAC` set to an empty string),
or when compiling fails, `jar()` returns None with one line saying why, and the job keeps the Arrow/NumPy path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "udf" / "KafkaMurmur2.java"
CLASS = "kafkaplanner.udf.KafkaMurmur2"
JAR_NAME = "kafka-planner-udf.jar"
# the SQL names the job uses: murmur2 of a BINARY / INT / BIGINT key (null for null), and a BINARY key's partition
UDFS = {
    "kafka_murmur2_bytes": "OfBytes",
    "kafka_murmur2_int": "OfInt",
    "kafka_murmur2_long": "OfLong",
    "kafka_partition_bytes": "PartitionOfBytes",
}


@dataclass(frozen=True)
class Compiled:
    jar: str | None  # the cached jar, or None when it could not be built
    note: str = ""  # why not (one line), when jar is None


def javac() -> str | None:
    """The JDK compiler: KAFKA_PLANNER_JAVAC (an empty value: none), else `javac` on PATH, else $JAVA_HOME/bin."""
    override = os.environ.get("KAFKA_PLANNER_JAVAC")
    if override is not None:
        return override or None
    found = shutil.which("javac")
    if found:
        return found
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "javac", os.X_OK):
        return str(Path(home) / "bin" / "javac")
    return None


def spark_jars() -> Path:
    """The jars the driver runs with: $SPARK_HOME/jars when it exists, else PySpark's own."""
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-planner" / "udf"


def _release(version: str) -> str:
    """The class-file release: Java 17 for Spark 4 (its minimum), Java 8 for Spark 3."""
    return "17" if int(version.split(".")[0]) >= 4 else "8"


def cache_key(source: bytes, version: str) -> str:
    return hashlib.sha256(source + f"\0spark {version}\0release {_release(version)}".encode()).hexdigest()[:20]


PATTERNS = (
    "spark-sql*",
    "spark-core*",
    "spark-catalyst*",
    "spark-unsafe*",
    "spark-common-utils*",
    "scala-library*",
    "kryo*",
)


def _classpath(jars: Path) -> str:
    """The jars the source compiles against: Spark SQL's (UDF1: spark-sql-api in Spark 4, spark-sql before, and the
    QueryExecution), Spark core's (RDD, the Java function interfaces), catalyst's (InternalRow), unsafe's
    (UTF8String, Platform) and Scala's; reading all ~250 jars would make javac take seconds longer."""
    own = sorted(str(p) for pattern in PATTERNS for p in jars.glob(pattern + ".jar"))
    return os.pathsep.join(own) if own else str(jars / "*")


def compile_jar(compiler: str | None = None, root: Path | None = None, progress=lambda s: None) -> Compiled:
    """The UDF jar from the cache, compiled there first if needed."""
    source = SOURCE.read_bytes()
    version = spark_version()
    final = (root or cache_root()) / cache_key(source, version)
    jar = final / JAR_NAME
    if jar.is_file():
        return Compiled(str(jar))
    compiler = compiler if compiler is not None else javac()
    if not compiler:
        return Compiled(None, "no JDK compiler (javac) found")
    progress(f"compiling the murmur2 UDF with {compiler} into {final}")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
    except OSError as exc:
        return Compiled(None, f"cannot write the UDF cache {final.parent} ({exc.strerror or exc})")
    try:
        classes = work / "classes"
        classes.mkdir()
        cmd = [compiler, "--release", _release(version), "-nowarn", "-cp", _classpath(spark_jars())]
        done = subprocess.run(
            [*cmd, "-d", str(classes), str(SOURCE)], capture_output=True, text=True, timeout=300, check=False
        )
        if done.returncode != 0:
            first = next((ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()), "")
            return Compiled(None, f"javac failed ({first.strip() or f'exit {done.returncode}'})")
        with zipfile.ZipFile(work / JAR_NAME, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: kafka-planner\n\n")
            for cls in sorted(classes.rglob("*.class")):
                zf.write(cls, cls.relative_to(classes).as_posix())
        shutil.rmtree(classes)
        try:
            os.rename(work, final)  # atomic; another run may have won the race: its jar is as good as ours
        except OSError:
            if not jar.is_file():
                raise
        return Compiled(str(jar))
    except (OSError, subprocess.SubprocessError) as exc:
        return Compiled(None, f"cannot compile the murmur2 UDF ({getattr(exc, 'strerror', None) or exc})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def register(spark, jar: str) -> bool:
    """Register the UDFs in `spark` (the jar is on spark.jars, or added now to a session started without it);
    False when the JVM cannot load them."""
    from pyspark.sql.types import IntegerType

    try:
        if not all(spark.catalog.functionExists(name) for name in UDFS):
            jars = spark.sparkContext.getConf().get("spark.jars", "")
            if jar not in jars.split(","):
                escaped = jar.replace("\\", "\\\\").replace("'", "\\'")
                spark.sql(f"ADD JAR '{escaped}'")
            for name, cls in UDFS.items():
                spark.udf.registerJavaFunction(name, f"{CLASS}${cls}", IntegerType())
        reachable = summarizer(spark).murmur2(0) == KAFKA_MURMUR2_OF_INT_0  # the class, through Py4J too
    except Exception:
        return False
    return reachable


KAFKA_MURMUR2_OF_INT_0 = 850957120  # murmur2 of IntegerSerializer's b"\0\0\0\0"


def summarizer(spark):
    """`KafkaMurmur2` in the driver's JVM, through Py4J (its `summarize` runs the job's counting pass)."""
    view = spark._jvm
    for part in CLASS.split("."):  # kafkaplanner -> udf -> KafkaMurmur2, as Py4J resolves packages and classes
        view = getattr(view, part)
    return view
