"""The host as Linux declares it: `machine` (the Host and its reader), `sysfs` (the raw facts from
sysfs and procfs), `text` (the host for a person to read)."""
