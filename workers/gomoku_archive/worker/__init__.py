"""The arq worker: the six-hourly planner and the month export jobs."""
