"""The toy loudness benchmark's training side (what ``trainer/benchmarks/toy/`` would hold)."""
