"""The synthetic bundle generator behind scripts/generate_bundle.py, one module per concern."""
