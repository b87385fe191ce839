"""What a verdict shows a person beside its word: fit tables, the scheduler's message rebuilt, nearest nodes."""
