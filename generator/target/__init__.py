"""The target: what app.yaml asks for. `app` (the frozen pydantic models and the loader), `fields`
(the field types), `yaml_source` (where every key came from), `units` (sizes and durations),
`params` (the channel parameters' domains and `--set`)."""
