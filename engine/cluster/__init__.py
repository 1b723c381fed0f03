"""The distributed path on Ray: connecting, embedding, feature shards, sessions as tasks."""
