# kafka-planner: `make demo` and `make test` each do all of their own set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUDO   := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
ZK_JAR := /usr/share/java/zookeeper.jar

.PHONY: demo test lint bench install install-all zookeeper kcat peers kafka kafka-zk skew-jars clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Runtime install: pyyaml, typer, tabulate, numpy.
$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# Everything the tests and benchmarks need: kazoo, pyspark, pytest, hypothesis, kafka-python, confluent-kafka, tansu,
# scipy (the peer benchmark's certifier), matplotlib (skew --plot).
$(VENV)/.all: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[zk,spark,plot,dev,bench,kafka]'
	touch $@ $(VENV)/.core

install: $(VENV)/.core
install-all: $(VENV)/.all

# Debian's ZooKeeper server (the tests start it on a free loopback port; Java 17 is on the machine).
zookeeper:
	@if [ ! -f $(ZK_JAR) ] || ! command -v openssl >/dev/null; then \
	  echo "installing Debian's zookeeper package"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq zookeeper openssl >/dev/null; \
	fi
	@test -f $(ZK_JAR) || { echo "zookeeper.jar missing after install" >&2; exit 1; }

# Debian's kcat: the tests decode the fake KRaft cluster's Metadata with it (a second, independent client).
kcat:
	@if ! command -v kcat >/dev/null; then \
	  echo "installing Debian's kcat package"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq kcat >/dev/null; \
	fi
	@command -v kcat >/dev/null || { echo "kcat missing after install" >&2; exit 1; }

# Apache Kafka's broker and tools from Maven Central, pinned in tests/kafka/pom.xml (the real-Kafka tests run them
# as `java -cp .kafka/<version>/lib/* <main class>`; tests/realkafka/cluster.py). Fetched once; nothing at test time.
KAFKA_VERSION := 4.4.0
KAFKA_LIB     := .kafka/$(KAFKA_VERSION)/lib
$(KAFKA_LIB)/.fetched: tests/kafka/pom.xml
	@command -v mvn >/dev/null && command -v java >/dev/null || { echo "make kafka: needs Maven and Java 17 (apt-get install maven openjdk-17-jre-headless)" >&2; exit 1; }
	@grep -q '<kafka.version>$(KAFKA_VERSION)</kafka.version>' tests/kafka/pom.xml || { echo "tests/kafka/pom.xml: kafka.version is not $(KAFKA_VERSION) (the Makefile's KAFKA_VERSION)" >&2; exit 1; }
	rm -rf $(KAFKA_LIB)
	mvn -q -B -f tests/kafka/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(KAFKA_LIB)
	touch $@

kafka: $(KAFKA_LIB)/.fetched

# Apache Kafka 3.9.1, the last release line with ZooKeeper mode, pinned in tests/kafka/zk-mode/pom.xml: the
# ZooKeeper-mode tests run three of its brokers against Debian's ZooKeeper (tests/realkafka/zk_cluster.py).
KAFKA_ZK_VERSION := 3.9.1
KAFKA_ZK_LIB     := .kafka/$(KAFKA_ZK_VERSION)/lib
$(KAFKA_ZK_LIB)/.fetched: tests/kafka/zk-mode/pom.xml
	@command -v mvn >/dev/null && command -v java >/dev/null || { echo "make kafka-zk: needs Maven and Java 17 (apt-get install maven openjdk-17-jre-headless)" >&2; exit 1; }
	@grep -q '<kafka.version>$(KAFKA_ZK_VERSION)</kafka.version>' tests/kafka/zk-mode/pom.xml || { echo "tests/kafka/zk-mode/pom.xml: kafka.version is not $(KAFKA_ZK_VERSION) (the Makefile's KAFKA_ZK_VERSION)" >&2; exit 1; }
	rm -rf $(KAFKA_ZK_LIB)
	mvn -q -B -f tests/kafka/zk-mode/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(KAFKA_ZK_LIB)
	touch $@

kafka-zk: $(KAFKA_ZK_LIB)/.fetched

# The peers the benchmark runs beside our plans, each in its own venv (both ship a top-level `kafka` package):
# Yelp's kafka-utils (kafka-cluster-manager) and LinkedIn's kafka-tools (kafka-assigner; needs six, and
# pkg_resources from setuptools < 81). Both install and run on Python 3.11 as released.
PEERS := .venv-peers
$(PEERS)/yelp/.installed:
	rm -rf $(PEERS)/yelp && $(PYTHON) -m venv $(PEERS)/yelp
	$(PEERS)/yelp/bin/pip install -q 'kafka-utils==4.1.0'
	touch $@

$(PEERS)/linkedin/.installed:
	rm -rf $(PEERS)/linkedin && $(PYTHON) -m venv $(PEERS)/linkedin
	$(PEERS)/linkedin/bin/pip install -q 'kafka-tools==0.1.9' 'six==1.17.0' 'setuptools<81'
	touch $@

peers: $(PEERS)/yelp/.installed $(PEERS)/linkedin/.installed

# Spark's own Kafka source for `skew kafka://…/topic` (planner/skew/pom.xml, the Spark release PySpark brings), fetched
# from Maven Central into planner/skew/jars/ (git-ignored); `skew` hands these jars to Spark and downloads nothing.
SKEW_JARS := planner/skew/jars/.fetched
$(SKEW_JARS): planner/skew/pom.xml $(VENV)/.all
	@want=$$(sed -n 's:.*<spark.version>\(.*\)</spark.version>.*:\1:p' planner/skew/pom.xml); \
	have=$$($(BIN)/python -c 'import pyspark; print(pyspark.__version__)'); \
	test "$$want" = "$$have" || { echo "planner/skew/pom.xml pins Spark $$want but PySpark is $$have" >&2; exit 1; }
	rm -rf planner/skew/jars
	mvn -q -B -f planner/skew/pom.xml dependency:copy-dependencies -DoutputDirectory=jars -DincludeScope=runtime
	touch $@

skew-jars: $(SKEW_JARS)

demo: $(VENV)/.core
	$(BIN)/kafka-planner describe topologies/producer-0.yaml
	$(BIN)/kafka-planner brokers topologies/six-brokers.yaml
	$(BIN)/kafka-planner create-topic topologies/six-brokers.yaml --topic payments --partitions 12 --replication-factor 3
	$(BIN)/kafka-planner reassign rebalance topologies/six-brokers.yaml

# ruff (pyflakes, bugbear, isort, complexity 15, line length 120, formatting), mypy on planner/, the layer contract
# (.importlinter: layers point down). The same three run from .pre-commit-config.yaml.
lint: $(VENV)/.all
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: $(VENV)/.all zookeeper kcat peers kafka kafka-zk skew-jars
	PYSPARK_PYTHON=$(CURDIR)/$(BIN)/python $(BIN)/python -m pytest -q -p no:cacheprovider

bench: $(VENV)/.all zookeeper kcat peers kafka skew-jars
	PYSPARK_PYTHON=$(CURDIR)/$(BIN)/python $(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(PEERS) .kafka build *.egg-info
