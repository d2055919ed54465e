"""Pairwise preference corpora (``docs/data.md#pairs``): reader and synthetic builder."""
