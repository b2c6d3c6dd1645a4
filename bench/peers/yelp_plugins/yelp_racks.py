"""Loaded by Yelp's kafka-cluster-manager (--group-parser DIR:yelp_racks): replication groups are the brokers' racks,
read from their ZooKeeper registration (`rack` field of /brokers/ids/N). Runs inside the kafka-utils venv."""

from kafka_utils.kafka_cluster_manager.cluster_info.replication_group_parser import ReplicationGroupParser


class RackGroupParser(ReplicationGroupParser):
    def get_replication_group(self, broker):
        return (broker.metadata or {}).get("rack")
