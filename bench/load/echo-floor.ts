// The echo floor: a bare Bun TCP server with orq's 4-byte length framing that
// answers every frame with itself at once, all replies of one data event in a
// single write (the fair floor, as measured earlier). Round trips against it are what a
// server that did no work at all would cost; orq's ping is compared with it.
// Run as a child process (`bun bench/load/echo-floor.ts --port 0`) so it can
// be pinned like the real server; prints `echo listening on HOST:PORT`.

import { parseArgs } from "node:util";
import { FrameDecoder } from "../../src/protocol/frame-decoder.ts";
import { SocketWriter } from "./socket-writer.ts";

/** Largest frame the floor splits (1 GiB): it echoes whatever the load generator sends. */
const echoFrameBytesMax = 1 << 30;

interface EchoState {
  writer: SocketWriter;
  frames: FrameDecoder;
}

/** Each connection splits frames with orq's own FrameDecoder, so the floor costs exactly orq's framing and nothing more. */
function echoState(writer: SocketWriter): EchoState {
  const frames = new FrameDecoder(echoFrameBytesMax, {
    frame: (bytes, start, end) => {
      writer.appendFrame(bytes.subarray(start, end));
      return true;
    },
    frameTooLarge: (lengthBytes) => {
      throw new Error(`echo floor: frame of ${lengthBytes} bytes`);
    },
  });
  return { writer, frames };
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
        socket.data = echoState(writer);
      },
      data(socket, chunk) {
        socket.data.frames.push(chunk);
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
