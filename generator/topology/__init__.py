"""The host as its CPU pairs measure: `classes` (the matrix clustered into latency classes), `plan`
(which pairs the probe measures), `text` (the measured topology for a person and as JSON)."""
