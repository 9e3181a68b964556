"""Errors that are the user's to fix. The CLI prints one line for them and exits with status 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: a missing or malformed file, an unknown key, an out-of-range value.

    The message names what is wrong (the file, the key and, where known, the line) and, where it
    can, what would be right. It is printed as is, without a traceback.
    """

    exit_status = 2


class UserCodeError(UserError):
    """The user's own code (workload.producer_source / consumer_source) failed on its own: it
    hung, crashed or exited when run alone, before any tuning. Exit status 3, to tell it from
    bad input and from the tool's own failures."""

    exit_status = 3
