"""Bayesian disclosure risk of noisy counts (not built yet)."""
