// The echo floor: a bare Bun TCP server with orq's 4-byte length framing that
// answers every frame with itself at once, all replies of one data event in a
// single write (the fair floor, as measured earlier). Round trips against it are what a
// server that did no work at all would cost; orq's ping is compared with it.
// Run as a child process (`bun bench/load/echo-floor.ts --port 0`) so it can
// be pinned like the real server; prints `echo listening on HOST:PORT`.

import { parseArgs } from "node:util";
import { startFramedFloor } from "./framed-floor.ts";

/** Largest frame the floor splits (1 GiB): it echoes whatever the load generator sends. */
const echoFrameBytesMax = 1 << 30;

/** Each frame goes back as it came (framed-floor.ts: orq's framing and nothing more). */
export function startEchoFloor(host: string, port: number): { port: number; stop(): void } {
  return startFramedFloor("echo floor", host, port, echoFrameBytesMax, (writer, bytes, start, end) => {
    writer.appendFrame(bytes.subarray(start, end));
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string", default: "0" } },
  });
  const host = values.host ?? "127.0.0.1";
  const server = startEchoFloor(host, Number(values.port ?? "0"));
  console.log(`echo listening on ${host}:${server.port}`);
  process.on("SIGTERM", () => {
    server.stop();
    process.exit(0);
  });
}
