"""AI Intelligence Bureau: who knows what, proven by scoped retrieval."""

__version__ = "0.1.0"
