"""Errors that are the user's to fix. The CLI prints one line for them and exits with status 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: a missing or malformed file, an unknown key, an out-of-range value.

    The message names what is wrong (the file, the key and, where known, the line) and, where it
    can, what would be right. It is printed as is, without a traceback.
    """

    exit_status = 2
