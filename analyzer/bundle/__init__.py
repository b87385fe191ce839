"""Step 1 of the pipeline: the kinds catalog, opening a bundle safely, validating what it holds."""
