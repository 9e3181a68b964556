"""The C++ runtime the generated header is made of (package data; no Python here)."""
