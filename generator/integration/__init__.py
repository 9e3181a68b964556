"""The build systems' side of `hspc-gen vendor`, as package data: HspcGen.cmake for CMake and
meson.build for Meson (`hspc-gen integration --cmake` / `--meson` print their paths)."""
