"""Scenarios: rules of scripted steps, loaded from YAML; each request is answered by the first
rule that matches it, from that rule's next step."""
