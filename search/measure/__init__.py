"""Measurement: a batch rendered into a Meson project (`toolchain`), built by Meson and Ninja
(`build`), and its plans run by the benchmark harness in one process each (`harness`, `run`)."""
