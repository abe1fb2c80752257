// A connection's back-pressure, the same rule on both front ends: the socket
// stops being read while the connection's unsent output is above
// limits.outputBytesPerConnectionMax, or while its own queue of work is full
// (requests in flight on the MessagePack port, commands waiting on the
// beanstalkd port), and is read again once both are back under. A client
// that sends without reading its answers then fills its own socket buffers
// and the kernel's, not the server's memory.

import type { ConnectionSocket } from "./listener.ts";
import type { OutputQueue } from "./output-queue.ts";

export class BackPressure {
  private paused = false;

  constructor(
    private readonly socket: ConnectionSocket,
    private readonly output: OutputQueue,
    private readonly outputBytesMax: number,
  ) {}

  /** The unsent output is above its cap. */
  get outputFull(): boolean {
    return this.output.unsentBytes > this.outputBytesMax;
  }

  /** Whether the socket is paused now. */
  get socketPaused(): boolean {
    return this.paused;
  }

  /** Pause the socket while `full` (or the output is over its cap), resume it otherwise. */
  update(full: boolean): void {
    if (full || this.outputFull) this.pause();
    else this.resume();
  }

  pause(): void {
    if (this.paused || this.socket.pause === undefined) return;
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.paused || this.socket.resume === undefined) return;
    this.paused = false;
    this.socket.resume();
  }
}
