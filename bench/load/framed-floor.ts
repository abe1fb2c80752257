// The listener the load generator's floors share (echo-floor.ts,
// jupiter-floor.ts): a bare Bun TCP server that splits each connection's
// input with orq's own FrameDecoder, so a floor costs exactly orq's framing,
// and answers through one SocketWriter per connection, all replies of one
// data event in a single write. What a frame gets back is the floor's
// `answer`.

import { FrameDecoder } from "../../src/protocol/frame-decoder.ts";
import { SocketWriter } from "./socket-writer.ts";

/** Answers one frame body, bytes [start, end) of `bytes` (valid during the call only), by appending to `writer`. */
export type FrameAnswer = (writer: SocketWriter, bytes: Uint8Array, start: number, end: number) => void;

interface ConnectionState {
  writer: SocketWriter;
  frames: FrameDecoder;
}

/** `name` labels its errors; a frame over `frameBytesMax` throws, which ends the floor (a broken stream from the load generator). */
export function startFramedFloor(
  name: string,
  host: string,
  port: number,
  frameBytesMax: number,
  answer: FrameAnswer,
): { port: number; stop(): void } {
  const listener = Bun.listen<ConnectionState>({
    hostname: host,
    port,
    socket: {
      open(socket) {
        socket.setNoDelay(true);
        const writer = new SocketWriter();
        writer.attach(socket as never);
        const frames = new FrameDecoder(frameBytesMax, {
          frame: (bytes, start, end) => {
            answer(writer, bytes, start, end);
            return true;
          },
          frameTooLarge: (lengthBytes) => {
            throw new Error(`${name}: frame of ${lengthBytes} bytes`);
          },
        });
        socket.data = { writer, frames };
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
