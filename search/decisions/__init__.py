"""Statistics and decisions: paired statistics (`stats`), a winner picked with a margin (`decide`),
and what the search found, as the model's typed values (`findings`)."""
