"""Replica placement: Kafka's AdminUtils (kafka.py), KRaft's StripedReplicaPlacer (kraft.py), our balanced choice
(balanced.py)."""
