"""What to try next: the parameter space (`space`, `placements`), the batch a strategy proposes
(`base`), and the strategies, one module each (`stage_one`, `stage_two`, `exhaustive`), listed
explicitly in `registry`."""
