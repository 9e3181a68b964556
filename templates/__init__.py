"""Jinja2 templates (package data; this file only makes the folder a package)."""
