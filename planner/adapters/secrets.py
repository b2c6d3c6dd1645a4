"""One rule for credentials: no error, note, log line or written file shows a value read from a credentials source
(a `--command-config` file, the `KAFKA_PLANNER_*` variables, the user info of a URL, a Spark setting whose key names
a secret). Messages name the key and the file, never the value.

Readers keep that rule where they word their messages; this module is the second line of defence: the values read
from secret-named keys are remembered (`remember`) and `redact` blanks them, and any URL user info, in every line the
command line prints as an error.
"""

from __future__ import annotations

import re

MASK = "***"
# Spark's spark.redaction.regex default is (?i)secret|password|token|access[.]?key; Kafka's sensitive settings are
# *.password, sasl.jaas.config and the like. A key is secret when one of its words is one of these.
_SECRET_KEY = re.compile(
    r"(?i)(secret|password|passwd|pwd|token|credential|jaas|keytab|(^|[._\-])(access[._\-]?key|key|sas)([._\-]|$))"
)
# scheme://user:password@host (and the typos of it: Kafka://, kafka:/, zookeeper://): everything between the
# scheme's colon and the last @ of the word is user info (a secret may hold a '/' or ':').
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*:/+)([^\s]*)@")
_remembered: set[str] = set()


def is_secret_key(key: str) -> bool:
    """Whether a setting's key names a secret (`ssl.key.password`, `spark.hadoop.fs.s3a.secret.key`, ...)."""
    return _SECRET_KEY.search(key) is not None


def remember(value: str | None) -> None:
    """A value read from a credentials source: `redact` blanks it from now on (values under 4 characters are too
    common to blank and too short to protect anything)."""
    if value and len(value.strip()) >= 4:
        _remembered.add(value.strip())


def mask_userinfo(text: str) -> str:
    """`text` with the user info of every URL in it replaced by ***: `s3a://KEY:SECRET@bucket/x` →
    `s3a://***@bucket/x`."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)


def has_userinfo(text: str) -> bool:
    return mask_userinfo(text) != text


def redact(text: str) -> str:
    """`text` with every remembered secret and any URL user info blanked."""
    for value in sorted(_remembered, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return mask_userinfo(text)
