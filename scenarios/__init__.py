"""The scenario library that ships with mockoss (installed as ``mockoss.scenarios``)."""
