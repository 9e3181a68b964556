"""The search, behind one face (`api`): `channel` (the channel's search, batch by batch) and
`batch`/`tune` (one batch replayed or measured, within its budget), `contest` (`hspc-gen bench`);
by role, `records/` (the one store and its kinds), `decisions/` (statistics, racing, the pick),
`strategies/` (the space and what to try next), `measure/` (build and run) and `threads/`."""
