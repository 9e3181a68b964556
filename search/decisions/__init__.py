"""Statistics and decisions: paired statistics, racing a batch, picking a winner with a margin, and
what the search found as the model's typed values."""
