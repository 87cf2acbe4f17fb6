"""The maintainers' tools, left out of the student edition: mutation testing, timing, fixtures."""
