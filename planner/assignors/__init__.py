"""The consumer group assignors, one module each (Kafka's client-side and KIP-848 server-side), and running them."""
