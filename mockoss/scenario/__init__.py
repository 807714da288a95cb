"""Scenarios: scripted steps, loaded from YAML, consumed one per request."""
