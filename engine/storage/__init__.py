"""Files on disk: durable appends and writes, strict readers, locks, run folders, SQLite caches."""
