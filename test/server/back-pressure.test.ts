// Goal: the back-pressure rule both front ends share: the output counts as
// full only above its cap (cap-1 and cap read on, cap+1 pauses), `update`
// pauses for a full work queue too, and the socket is paused and resumed once
// per change, not once per call.

import { describe, expect, test } from "bun:test";
import { BackPressure } from "../../src/server/back-pressure.ts";
import type { ConnectionSocket } from "../../src/server/listener.ts";
import { OutputBufferPool } from "../../src/server/output-buffers.ts";
import { OutputQueue } from "../../src/server/output-queue.ts";

class CountingSocket implements ConnectionSocket {
  pauses = 0;
  resumes = 0;
  write(): number {
    return 0;
  }
  end(): void {}
  terminate(): void {}
  pause(): void {
    this.pauses++;
  }
  resume(): void {
    this.resumes++;
  }
}

const capBytes = 100;

/** A queue holding `unsentBytes` (its flush never runs), its back-pressure and socket. */
function holding(unsentBytes: number) {
  const socket = new CountingSocket();
  const output = new OutputQueue(socket, () => {}, new OutputBufferPool(), () => {});
  if (unsentBytes > 0) output.push(new Uint8Array(unsentBytes));
  return { socket, output, backPressure: new BackPressure(socket, output, capBytes) };
}

describe("BackPressure", () => {
  test("the output is full only above its cap", () => {
    expect(holding(capBytes - 1).backPressure.outputFull).toBe(false);
    expect(holding(capBytes).backPressure.outputFull).toBe(false);
    expect(holding(capBytes + 1).backPressure.outputFull).toBe(true);
  });

  test("update pauses for a full output or a full work queue, and resumes once both are under", () => {
    const over = holding(capBytes + 1);
    over.backPressure.update(false);
    expect([over.socket.pauses, over.backPressure.socketPaused]).toEqual([1, true]);

    const s = holding(0);
    s.backPressure.update(true);
    s.backPressure.update(true);
    expect([s.socket.pauses, s.socket.resumes]).toEqual([1, 0]);
    s.backPressure.update(false);
    s.backPressure.update(false);
    expect([s.socket.pauses, s.socket.resumes, s.backPressure.socketPaused]).toEqual([1, 1, false]);
  });

  test("a socket without pause and resume is left alone", () => {
    const output = new OutputQueue({ write: () => 0 }, () => {}, new OutputBufferPool(), () => {});
    const bare: ConnectionSocket = { write: () => 0, end: () => {}, terminate: () => {} };
    const backPressure = new BackPressure(bare, output, capBytes);
    backPressure.update(true);
    expect(backPressure.socketPaused).toBe(false);
  });
});
