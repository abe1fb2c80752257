// Listening errors in words an operator can act on. Bun says only "Failed to
// listen at 127.0.0.1" for a port in use; orq names the address, the cause
// and the flag to change. `orq serve` also probes its protocol port before it
// creates or locks the data dir, so a port in use fails before anything is
// written (the port is bound for good only after recovery).

/** The one line for a failed listen on host:port; `flag` is the option that chose the port. */
export function listenFailure(host: string, port: number, flag: "--port" | "--http-port", error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `cannot listen on ${host}:${port}${flag === "--http-port" ? " (http)" : ""}`;
  if (code === "EADDRINUSE") return `${where}: address in use; choose another ${flag}`;
  if (code === "EADDRNOTAVAIL") return `${where}: no such address on this machine; choose another --host`;
  if (code === "EACCES") return `${where}: permission denied (ports below 1024 need privileges); choose another ${flag}`;
  return `${where}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Whether host:port can be listened on now: binds it and lets go at once.
 * Null when it can, else the error (for listenFailure). Port 0 checks the host.
 */
export function probeListen(host: string, port: number): unknown {
  try {
    const probe = Bun.listen({ hostname: host, port, socket: { data: () => {} } });
    probe.stop(true);
    return null;
  } catch (error) {
    return error;
  }
}
