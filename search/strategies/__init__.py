"""Search strategies: one module each, listed explicitly in `registry`."""
