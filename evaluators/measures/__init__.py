"""Measurements shared by benchmarks that need no judge (DNSMOS P.835, ...)."""
