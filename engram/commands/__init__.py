"""One module per CLI verb; each exposes run(...) -> exit code."""
