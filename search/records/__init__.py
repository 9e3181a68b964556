"""Records and stores: every measured fact as a record kind in the one append-only store, the
previous version's files taken in, wisdom carried between hosts, bench's rounds."""
