"""Reassignment planning: minimal-movement moves, goals, batches."""
