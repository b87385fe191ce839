"""Hostile and broken bundles (issue 6): the corpus table, its builders, and the literal inputs in data/."""
