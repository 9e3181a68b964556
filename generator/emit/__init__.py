"""The emit stage and what reads its output back: `header` (the generated header, written
atomically), `header_text` (outside text in its comments), `provenance` (the header's kTunedOn),
`check` (`hspc-gen check`: was this header tuned here?)."""
