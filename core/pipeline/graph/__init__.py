"""The graph stage: schedules extraction (core/graph/extract) over ready papers in batches, commits entities,
relations and their provenance, rebuilds what changed (build.py), and applies a person's edits and merges
(edits.py, duplicates.py)."""
