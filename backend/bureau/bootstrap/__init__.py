"""The composition root. `bureau serve` (through the API's lifespan) and the one-shot commands (`setup`,
`erase`, `clear`) all build the service here, so there is one way to start it:

- `phases`: the start-up phases and `Startup` (where a starting process is; light, no I/O);
- `runtime`: `open_runtime` / `close_runtime` / `running` and the process-wide background jobs.

Start-up reports each phase as it begins: the console prints a line per phase and, while the server is
starting, every API request (`/api/ready` included) answers 503 `STARTING` with the phase.
"""
