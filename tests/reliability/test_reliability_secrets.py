# ruff: noqa: E501, B023  (a table of error paths, one per line; the lambdas bind their loop values by an immediate call)
"""Secrets never show: no error, note or written file holds a value read from a credentials source (a
--command-config file, the KAFKA_PLANNER_* variables, URL user info, a Spark setting whose key names a secret).

The canary test drives every error path that reads one of those sources with a canary secret in it, and greps all of
stdout, stderr and every file the command left behind for the canary."""

import os

import pytest

from planner.adapters import secrets

CANARY = "Canary-pw-7f3e9b"
CLOSED = "127.0.0.1:1"  # nothing listens on port 1: connecting fails at once
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="ops" password="{pw}";'


def _cc(tmp_path, text):
    p = tmp_path / "client.properties"
    p.write_text(text)
    return str(p)


def _export(cc, *extra):
    return ("kafka", "export", f"kafka://{CLOSED}", "--command-config", cc, "--timeout", "0.5", *extra)


# --- the cases, exact texts ---------------------------------------------------------------------------------


def test_a_password_run_into_security_protocol_is_not_shown(planner_cli_here, tmp_path):
    cc = _cc(tmp_path, f"security.protocol=SASL_PLAINTEXT {CANARY}\n")
    assert planner_cli_here(*_export(cc)) == (
        2,
        "",
        f"error: --command-config {cc}: the value of security.protocol is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, "
        "SASL_SSL (the value holds more than one word: does its line end in a backslash, joining the next line to "
        "it?)\n",
    )


def test_a_password_as_the_mechanism_is_not_shown(planner_cli_here, tmp_path):
    cc = _cc(tmp_path, f"security.protocol=SASL_SSL\nsasl.mechanism={CANARY}\n")
    assert planner_cli_here(*_export(cc)) == (
        2,
        "",
        f"error: --command-config {cc}: the value of sasl.mechanism is not supported by kafka-planner (use one of "
        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)\n",
    )


def test_a_continuation_joining_the_jaas_line_into_the_mechanism(planner_cli_here, tmp_path):
    cc = _cc(
        tmp_path, f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\\\nsasl.jaas.config={JAAS.format(pw=CANARY)}\n"
    )
    assert planner_cli_here(*_export(cc)) == (
        2,
        "",
        f"error: --command-config {cc}: the value of sasl.mechanism is not supported by kafka-planner (use one of "
        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) (the value holds more than one word: does its line end in a "
        "backslash, joining the next line to it?)\n",
    )


def test_truststore_location_and_type_are_named_not_shown(planner_cli_here, tmp_path):
    cc = _cc(tmp_path, f"security.protocol=SSL\nssl.truststore.location={CANARY}\n")
    assert planner_cli_here(*_export(cc)) == (
        2,
        "",
        f"error: --command-config {cc}: ssl.truststore.location names no file (the path is not shown: settings "
        "may hold secrets)\n",
    )
    cc = _cc(tmp_path, f"security.protocol=SSL\nssl.truststore.location={cc}\nssl.truststore.type={CANARY}\n")
    assert planner_cli_here(*_export(cc)) == (
        2,
        "",
        f"error: --command-config {cc}: the value of ssl.truststore.type is not supported: give a PEM file "
        "(ssl.truststore.type=PEM; convert with keytool -exportcert -rfc / openssl)\n",
    )


URL_TYPOS = [
    (f"Kafka://ops:{CANARY}@host:9092", "'Kafka://***@host:9092'", " (did you mean kafka://host:port...?)"),
    (f"ZK://ops:{CANARY}@zk1:2181/kafka", "'ZK://***@zk1:2181/kafka'", " (did you mean zk://host:port...?)"),
    (f"zookeeper://ops:{CANARY}@zk1", "'zookeeper://***@zk1'", " (did you mean zk://host:port...?)"),
    (f"kafka:/ops:{CANARY}@host", "'kafka:/***@host'", " (did you mean kafka://host:port...?)"),
    (f" kafka://ops:{CANARY}@host", "' kafka://***@host'", " (did you mean kafka://host:port...?)"),
    (f"s3a://KEY:{CANARY}@bucket/t.yaml", "'s3a://***@bucket/t.yaml'", ""),
]


@pytest.mark.parametrize("url,shown,hint", URL_TYPOS)
def test_a_url_typo_with_credentials_is_shown_without_them(planner_cli_here, url, shown, hint):
    assert planner_cli_here("describe", url) == (
        2,
        "",
        f"error: {shown}: no such topology file, and not a URL kafka-planner reads{hint}: "
        "kafka://host:port[,host:port...] or zk://host:port[,host:port...][/chroot], lower case, no spaces; "
        "credentials never go in the URL\n",
    )


def test_a_url_typo_without_credentials(planner_cli_here):
    assert planner_cli_here("brokers", "Kafka://b1:9092") == (
        2,
        "",
        "error: 'Kafka://b1:9092': no such topology file, and not a URL kafka-planner reads (did you mean "
        "kafka://host:port...?): kafka://host:port[,host:port...] or zk://host:port[,host:port...][/chroot], lower "
        "case, no spaces\n",
    )


def test_skew_secret_spark_conf_and_s3a_credentials(planner_cli_here, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("a\n")
    assert planner_cli_here(
        "skew", "--keys", str(keys), "--partitions", "3", "--spark-conf", f"spark.hadoop.fs.s3a.secret.key {CANARY}"
    ) == (
        2,
        "",
        "error: --spark-conf (item 1 spark.hadoop.fs.s3a.secret.key): use KEY=VALUE, e.g. --spark-conf "
        "spark.executor.memory=4g (the item is not shown: it may hold a secret)\n",
    )
    assert planner_cli_here("skew", "--keys", f"s3a://AKIAEXAMPLE:{CANARY}@bucket/keys/", "--partitions", "3") == (
        2,
        "",
        "error: --keys s3a://***@bucket/keys/: do not put credentials in the path; set them with --spark-conf "
        "(spark.hadoop.fs.s3a.access.key=..., spark.hadoop.fs.s3a.secret.key=...) or the environment\n",
    )


def test_redact_blanks_remembered_values_and_user_info():
    secrets.remember("hunter2-long")
    secrets.remember("abc")  # too short to blank
    assert secrets.redact("pw hunter2-long; abc; x s3a://K:S/x@b/p y@z") == "pw ***; abc; x s3a://***@b/p y@z"
    assert [
        k
        for k in ("ssl.key.password", "sasl.mechanism", "fs.s3a.access.key", "ssl.keystore.location")
        if secrets.is_secret_key(k)
    ] == ["ssl.key.password", "fs.s3a.access.key"]


# --- the canary over every error path -------------------------------------------------------------------------------


def _props(tmp_path, text):
    return ("--command-config", _cc(tmp_path, text))


def _env_props(tmp_path, text):
    return {"KAFKA_PLANNER_KAFKA_COMMAND_CONFIG": _cc(tmp_path, text)}


def _auth_file(tmp_path, text):
    p = tmp_path / "zk-auth"
    p.write_text(text)
    return ("--zk-auth-file", str(p))


SASL = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + JAAS.format(pw=CANARY) + "\n"
TOPOLOGY_COMMANDS = [
    ("describe",),
    ("brokers",),
    ("reassign", "rebalance"),
    ("reassign", "decommission", "--brokers", "1"),
    ("create-topic", "--topic", "t", "--partitions", "3", "--replication-factor", "1"),
]
# (name, args(tmp_path) -> argv, env(tmp_path) -> dict)
CASES = [
    ("protocol-joined", lambda t: _export(*_props(t, f"security.protocol=SASL_SSL {CANARY}\n")[1:]), None),
    ("protocol-alone", lambda t: _export(*_props(t, f"security.protocol={CANARY}\n")[1:]), None),
    ("mechanism", lambda t: _export(*_props(t, f"security.protocol=SASL_SSL\nsasl.mechanism={CANARY}\n")[1:]), None),
    (
        "continuation",
        lambda t: _export(*_props(t, f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN \\\n{CANARY}\n")[1:]),
        None,
    ),
    (
        "jaas-no-username",
        lambda t: _export(
            *_props(t, f'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=x password="{CANARY}";\n')[
                1:
            ]
        ),
        None,
    ),
    (
        "truststore",
        lambda t: _export(*_props(t, f"security.protocol=SSL\nssl.truststore.location={CANARY}\n")[1:]),
        None,
    ),
    (
        "keystore",
        lambda t: _export(*_props(t, f"security.protocol=SSL\nssl.keystore.location=/x {CANARY}\n")[1:]),
        None,
    ),
    (
        "keystore-type",
        lambda t: _export(
            *_props(t, f"security.protocol=SSL\nssl.keystore.location=/dev/null\nssl.keystore.type=PKCS12 {CANARY}\n")[
                1:
            ]
        ),
        None,
    ),
    ("sasl-closed-port", lambda t: _export(*_props(t, SASL)[1:]), None),
    ("long-number", lambda t: _export(*_props(t, SASL + "request.timeout.ms=" + "9" * 5000 + "\n")[1:]), None),
    (
        "env-kafka-timeout-inf",
        lambda t: ("describe", f"kafka://{CLOSED}"),
        lambda t: {"KAFKA_PLANNER_KAFKA_TIMEOUT": f"inf{CANARY}"},
    ),
    (
        "ssl-key-password-closed-port",
        lambda t: _export(*_props(t, f"security.protocol=SSL\nssl.key.password={CANARY}\n")[1:]),
        None,
    ),
    (
        "env-command-config",
        lambda t: ("kafka", "export", f"kafka://{CLOSED}", "--timeout", "0.5"),
        lambda t: _env_props(t, f"security.protocol=SASL_PLAINTEXT {CANARY}\n"),
    ),
    (
        "env-command-config-topology",
        lambda t: ("describe", f"kafka://{CLOSED}"),
        lambda t: {**_env_props(t, SASL), "KAFKA_PLANNER_KAFKA_TIMEOUT": "0.5"},
    ),
    (
        "env-kafka-timeout",
        lambda t: ("describe", f"kafka://{CLOSED}"),
        lambda t: {"KAFKA_PLANNER_KAFKA_TIMEOUT": CANARY},
    ),
    ("env-zk-timeout", lambda t: ("describe", f"zk://{CLOSED}"), lambda t: {"KAFKA_PLANNER_ZK_TIMEOUT": CANARY}),
    ("env-zk-timeout-zk", lambda t: ("zk", "export", f"zk://{CLOSED}"), lambda t: {"KAFKA_PLANNER_ZK_TIMEOUT": CANARY}),
    ("env-zk-auth-bad", lambda t: ("describe", f"zk://{CLOSED}"), lambda t: {"KAFKA_PLANNER_ZK_AUTH": CANARY}),
    (
        "env-zk-auth-closed-port",
        lambda t: ("zk", "export", f"zk://{CLOSED}", "--zk-timeout", "0.5"),
        lambda t: {"KAFKA_PLANNER_ZK_AUTH": f"ops:{CANARY}"},
    ),
    ("zk-auth-file-bad", lambda t: ("zk", "export", f"zk://{CLOSED}", *_auth_file(t, f"{CANARY}\n")), None),
    (
        "zk-auth-file-closed-port",
        lambda t: ("zk", "export", f"zk://{CLOSED}", "--zk-timeout", "0.5", *_auth_file(t, f"ops:{CANARY}\n")),
        None,
    ),
    ("kafka-url-userinfo", lambda t: ("kafka", "export", f"kafka://ops:{CANARY}@h:9092"), None),
    ("kafka-url-userinfo-path", lambda t: ("kafka", "export", f"kafka://h:9092/ops:{CANARY}@x"), None),
    ("kafka-url-typo", lambda t: ("kafka", "export", f"Kafka://ops:{CANARY}@h:9092"), None),
    ("zk-url-userinfo", lambda t: ("zk", "export", f"zk://ops:{CANARY}@h"), None),
    ("zk-url-typo", lambda t: ("zk", "export", f"ZK://ops:{CANARY}@h"), None),
    (
        "zk-url-typo-submit",
        lambda t: ("zk", "submit", f"zookeeper://ops:{CANARY}@h", "--reassignment-json-file", "x"),
        None,
    ),
    (
        "reassignment-file-url",
        lambda t: ("reassign", "verify", str(t / "t.yaml"), "--reassignment-json-file", f"s3a://K:{CANARY}@b/p.json"),
        None,
    ),
    (
        "sizes-file-url",
        lambda t: ("reassign", "rebalance", str(t / "t.yaml"), "--sizes", f"hdfs://u:{CANARY}@nn/sizes.json"),
        None,
    ),
    (
        "partition-topology-typo",
        lambda t: ("partition", "--topology", f"Kafka://u:{CANARY}@h", "--topic", "t", "--key", "k"),
        None,
    ),
    (
        "spark-conf-joined",
        lambda t: (
            "skew",
            "--keys",
            str(t / "t.yaml"),
            "--partitions",
            "2",
            "--spark-conf",
            f"spark.authenticate.secret {CANARY}",
        ),
        None,
    ),
    (
        "spark-conf-alone",
        lambda t: ("skew", "--keys", str(t / "t.yaml"), "--partitions", "2", "--spark-conf", CANARY),
        None,
    ),
    ("skew-keys-s3a", lambda t: ("skew", "--keys", f"s3a://AKIA:{CANARY}@bucket/k", "--partitions", "2"), None),
    (
        "skew-topology-typo",
        lambda t: ("skew", "--keys", str(t / "t.yaml"), "--topology", f"zookeeper://u:{CANARY}@h", "--topic", "t"),
        None,
    ),
] + [
    (f"{'-'.join(c[:2])}-{typo}", (lambda c, typo: lambda t: (*c[:2], typo.format(pw=CANARY), *c[2:]))(c, typo), None)
    for c in TOPOLOGY_COMMANDS
    for typo in ("Kafka://ops:{pw}@h:9092", "ZK://ops:{pw}@h/k", "kafka:/ops:{pw}@h", " zk://ops:{pw}@h")
]


@pytest.mark.parametrize("name,argv,env", CASES, ids=[c[0] for c in CASES])
def test_the_canary_never_shows(planner_cli_here, topo, tmp_path, name, argv, env):
    (tmp_path / "t.yaml").write_text(open(topo).read())
    work = tmp_path / "out"
    work.mkdir()
    args = argv(tmp_path)
    args = (*args, "--output-dir", str(work / "plan")) if args[0] == "reassign" else args
    environ = env(tmp_path) if env else None
    before = set(tmp_path.rglob("*"))
    code, out, err = planner_cli_here(*args, env=environ)
    # bad input exits 2; a cluster that cannot be reached, 1 (README: exit codes)
    assert code == (1 if "closed-port" in name or name == "env-command-config-topology" else 2), (code, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert CANARY not in out + err
    for path in set(tmp_path.rglob("*")) - before:  # every file the command left behind
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    assert not os.listdir(work)


def _ca_file(tmp_path) -> str:
    import subprocess

    key, cert = tmp_path / "key.pem", tmp_path / "ca.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return str(cert)


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_the_canary_never_shows_on_hostile_servers(planner_cli_here, tmp_path, protocol):
    # issue 33's bootstrap paths (a silent server, a refused one, an answer length over the limit or negative, a
    # server that closes at once; a plaintext answer to a TLS handshake), with the password and the key password
    from test_reliability_hostile_brokers import Listener

    text = SASL.replace("SASL_PLAINTEXT", protocol)
    if protocol == "SASL_SSL":
        text += f"ssl.truststore.type=PEM\nssl.truststore.location={_ca_file(tmp_path)}\nssl.key.password={CANARY}\n"
    cc = _cc(tmp_path, text)
    with Listener() as silent, Listener(2_000_000_000) as big, Listener(-1) as negative, Listener("close") as closing:
        servers = [silent.address, CLOSED, big.address, negative.address, closing.address]
        code, out, err = planner_cli_here(
            "kafka", "export", "kafka://" + ",".join(servers), "--command-config", cc, "--timeout", "0.5"
        )
    assert (code, out) == (1, ""), err
    assert err.startswith("error: kafka://") and err.count("\n") == 1, err
    assert all(server in err for server in servers), err
    assert CANARY not in err
