"""engram: memory cards for AI coding agents, delivered once, at the right moment."""

__version__ = "0.1.0"
