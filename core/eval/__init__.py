"""Evaluation: question sets, metrics per mode, runs kept per workspace (see docs/architecture.md)."""
