// The echo floor: a bare Bun TCP server with orq's 4-byte length framing that
// answers every frame with itself at once, all replies of one data event in a
// single write (MEASURED.md's fair floor). Round trips against it are what a
// server that did no work at all would cost; orq's ping is compared with it.
// Run as a child process (`bun bench/load/echo-floor.ts --port 0`) so it can
// be pinned like the real server; prints `echo listening on HOST:PORT`.

import { parseArgs } from "node:util";
import { SocketWriter } from "./socket-writer.ts";

interface EchoState {
  writer: SocketWriter;
  leftover: Uint8Array | null;
}

function onData(state: EchoState, chunk: Uint8Array): void {
  let bytes = chunk;
  if (state.leftover !== null) {
    bytes = new Uint8Array(state.leftover.length + chunk.length);
    bytes.set(state.leftover);
    bytes.set(chunk, state.leftover.length);
    state.leftover = null;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (bytes.length - offset >= 4) {
    const bodyBytes = view.getUint32(offset);
    if (bytes.length - offset - 4 < bodyBytes) break;
    state.writer.appendFrame(bytes.subarray(offset + 4, offset + 4 + bodyBytes));
    offset += 4 + bodyBytes;
  }
  if (offset < bytes.length) state.leftover = bytes.slice(offset);
}

export function startEchoFloor(host: string, port: number): { port: number; stop(): void } {
  const listener = Bun.listen<EchoState>({
    hostname: host,
    port,
    socket: {
      open(socket) {
        socket.setNoDelay(true);
        const writer = new SocketWriter();
        writer.attach(socket as never);
        socket.data = { writer, leftover: null };
      },
      data(socket, chunk) {
        onData(socket.data, chunk);
      },
      drain(socket) {
        socket.data.writer.onDrain();
      },
    },
  });
  return { port: listener.port, stop: () => listener.stop(true) };
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
