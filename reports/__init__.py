"""Reports: the result JSON and the Markdown summary."""
