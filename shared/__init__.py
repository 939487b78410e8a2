"""Code used by both processes: pure logic (SGF, replay, profile) and the I/O edges."""
