"""mockoss: a fake gpt-oss inference server for deterministic, offline tests.

Data flows one way: HTTP request → scenario step → scripted :class:`~mockoss.harmony.Completion`
(Harmony text) → o200k_harmony tokens → openai-harmony's ``StreamableParser``
(:class:`~mockoss.harmony.ParserTrace`) → a server profile's mapping → JSON or SSE.
"""

__version__ = "0.1.0"
