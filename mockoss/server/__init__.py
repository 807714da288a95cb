"""The HTTP layer (FastAPI) and the framework-free server core it wraps."""
