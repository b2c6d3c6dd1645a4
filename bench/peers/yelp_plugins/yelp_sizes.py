"""Loaded by Yelp's kafka-cluster-manager (--partition-measurer DIR:yelp_sizes --measurer-args "--log-dirs FILE"):
each partition's weight and size are its bytes from `kafka-log-dirs.sh --describe` output (the largest replica, as
kafka-planner's --sizes reads it). Runs inside the kafka-utils venv."""

import argparse
import json

from kafka_utils.kafka_cluster_manager.cluster_info.partition_measurer import PartitionMeasurer


class LogDirsMeasurer(PartitionMeasurer):
    def parse_args(self, measurer_args):
        parser = argparse.ArgumentParser(prog="yelp_sizes")
        parser.add_argument("--log-dirs", required=True)
        path = parser.parse_args(measurer_args).log_dirs
        with open(path) as fh:
            text = fh.read()
        self.sizes = {}
        for broker in json.loads(text[text.index("{") :])["brokers"]:
            for log_dir in broker["logDirs"]:
                for part in log_dir["partitions"]:
                    topic, _, pid = part["partition"].rpartition("-")
                    key = (topic, int(pid))
                    self.sizes[key] = max(self.sizes.get(key, 0), part["size"])

    def get_weight(self, partition_name):
        return self.sizes[partition_name]

    def get_size(self, partition_name):
        return self.sizes[partition_name]
