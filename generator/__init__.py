"""hspc-gen: a code-generating autotuner for high-speed producer/consumer channels."""

__version__ = "0.1.0"
