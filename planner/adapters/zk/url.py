"""`zk://` URLs and connection options (timeout, digest credentials, TLS files), from flags or the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from planner.adapters import secrets
from planner.adapters.files import read_text
from planner.adapters.hosts import parse_hosts, seconds_from_env
from planner.model import PlannerError

AUTH_ENV = "KAFKA_PLANNER_ZK_AUTH"


@dataclass(frozen=True)
class ZkUrl:
    url: str  # as given (no secrets: credentials never go in the URL)
    hosts: tuple[tuple[str, int], ...]
    chroot: str  # "" or "/path"

    @property
    def connect_string(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.hosts) + self.chroot


DEFAULT_PORT = 2181  # ZooKeeper's ConnectStringParser: a host without a port is host:2181


def parse_url(url: str) -> ZkUrl:
    """`zk://host:port[,host:port…][/chroot]` → hosts and chroot; one clear error for anything else."""
    shown = secrets.mask_userinfo(url)  # a typo must not show the password of kafka://u:p@…
    if not url.startswith("zk://"):
        raise PlannerError(f"{shown}: not a ZooKeeper URL: expected zk://host:port[,host:port...][/chroot]")
    rest = url[len("zk://") :]
    hosts_part, slash, chroot = rest.partition("/")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    if "@" in hosts_part:
        raise PlannerError(f"zk://...: do not put credentials in the URL; use --zk-auth-file or {AUTH_ENV}")
    if not hosts_part:
        raise PlannerError(f"{shown}: no ZooKeeper host: expected zk://host:port[,host:port...][/chroot]")
    hosts = parse_hosts(shown, hosts_part, DEFAULT_PORT, "zk://zk1:2181,zk2:2181/kafka")
    if "//" in chroot or any(seg in (".", "..") for seg in chroot.split("/")):
        raise PlannerError(f"{shown}: invalid chroot {chroot!r}")
    return ZkUrl(url=url, hosts=hosts, chroot=chroot)


@dataclass(frozen=True)
class ZkOptions:
    timeout: float = 10.0  # seconds: connecting, and the whole of each read or write
    auth: str | None = None  # "user:password" for digest authentication (never printed)
    ca_file: str | None = None  # TLS: CA bundle; TLS is used when given
    cert_file: str | None = None
    key_file: str | None = None

    def __repr__(self) -> str:  # keep the password out of any traceback or log
        return f"ZkOptions(timeout={self.timeout}, auth={'***' if self.auth else None}, ca_file={self.ca_file!r})"


TIMEOUT_ENV = "KAFKA_PLANNER_ZK_TIMEOUT"
CA_FILE_ENV = "KAFKA_PLANNER_ZK_CA_FILE"
CERT_FILE_ENV = "KAFKA_PLANNER_ZK_CERT_FILE"
KEY_FILE_ENV = "KAFKA_PLANNER_ZK_KEY_FILE"


def options_from_env(environ: Mapping[str, str] | None = None) -> ZkOptions:
    """Connection options for a `zk://` TOPOLOGY given to any command (describe, reassign, consumers, ...): the
    same settings as the `zk` commands' --zk-* options, from $KAFKA_PLANNER_ZK_TIMEOUT, $KAFKA_PLANNER_ZK_AUTH,
    $KAFKA_PLANNER_ZK_CA_FILE, $KAFKA_PLANNER_ZK_CERT_FILE and $KAFKA_PLANNER_ZK_KEY_FILE."""
    env = environ if environ is not None else os.environ
    timeout = seconds_from_env(env, TIMEOUT_ENV)
    ca, cert, key = (env.get(n, "").strip() or None for n in (CA_FILE_ENV, CERT_FILE_ENV, KEY_FILE_ENV))
    if (cert or key) and not ca:
        raise PlannerError(f"${CERT_FILE_ENV}/${KEY_FILE_ENV} need ${CA_FILE_ENV} (TLS)")
    return ZkOptions(timeout=timeout, auth=auth_from(None, env), ca_file=ca, cert_file=cert, key_file=key)


def auth_from(auth_file: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Credentials `user:password` from `--zk-auth-file`, else from $KAFKA_PLANNER_ZK_AUTH, else none."""
    if auth_file:
        text = read_text(auth_file, f"--zk-auth-file {auth_file}").strip()
        source = f"--zk-auth-file {auth_file}"
    else:
        text = (environ if environ is not None else os.environ).get(AUTH_ENV, "").strip()
        if not text:
            return None
        source = f"${AUTH_ENV}"
    user, colon, password = text.partition(":")
    secrets.remember(password)
    if not colon or not user or not password or "\n" in text:
        raise PlannerError(f"{source}: expected one line user:password for ZooKeeper digest authentication")
    return text
