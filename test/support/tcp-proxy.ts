// A TCP proxy for fault tests: forwards every connection made to its port to
// one target (PostgreSQL), and can be switched to black-hole mode, in which
// it forwards nothing in either direction but closes nothing either: the
// ends see silence, as across a network partition, not a reset.
//   const proxy = await TcpProxy.start({ host: "127.0.0.1", port: pg.port });
//   ... point one node's --store URL at 127.0.0.1:proxy.port ...
//   proxy.blackhole();   // both ends stop hearing from each other
//   proxy.heal();        // what was held back is delivered, as TCP
//                        // retransmission does when a partition heals; an end
//                        // that closed meanwhile closes the other one now
//   proxy.stop();
// Bytes held back are kept in memory in order, per direction; a write the
// kernel takes only in part keeps the rest for the socket's drain.

import type { Socket, TCPSocketListener } from "bun";

/** One direction of one connection: bytes waiting to be written to `to`. */
class Pipe {
  private queue: Uint8Array[] = [];
  private closeAfter = false;
  to: Socket<Link> | null = null;

  constructor(private readonly proxy: TcpProxy) {}

  push(bytes: Uint8Array): void {
    this.queue.push(new Uint8Array(bytes));
    this.flush();
  }

  /** The far end closed: close `to` once the bytes before it are written (after heal() when black-holed). */
  end(): void {
    this.closeAfter = true;
    this.flush();
  }

  flush(): void {
    const to = this.to;
    if (to === null || this.proxy.blackholed) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const written = to.write(head);
      if (written < head.length) {
        this.queue[0] = head.subarray(Math.max(0, written));
        return; // the rest on drain
      }
      this.queue.shift();
    }
    if (this.closeAfter) to.end();
  }
}

/** A proxied connection: the socket the node opened and the one to the target. */
interface Link {
  /** Bytes from the node to the target. */
  up: Pipe;
  /** Bytes from the target to the node. */
  down: Pipe;
}

export class TcpProxy {
  blackholed = false;
  /** Connections accepted so far (a test can check the node really went through the proxy). */
  accepted = 0;
  private readonly pipes = new Set<Pipe>();
  private listener: TCPSocketListener<Link> | null = null;

  private constructor(private readonly target: { host: string; port: number }) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    proxy.listen();
    return proxy;
  }

  get port(): number {
    if (this.listener === null) throw new Error("the proxy is stopped");
    return this.listener.port;
  }

  blackhole(): void {
    this.blackholed = true;
  }

  heal(): void {
    this.blackholed = false;
    for (const pipe of this.pipes) pipe.flush();
  }

  stop(): void {
    this.listener?.stop(true);
    this.listener = null;
  }

  private listen(): void {
    const proxy = this;
    this.listener = Bun.listen<Link>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          proxy.accepted++;
          const up = new Pipe(proxy);
          const down = new Pipe(proxy);
          proxy.pipes.add(up);
          proxy.pipes.add(down);
          down.to = client;
          client.data = { up, down };
          void proxy.connectUpstream(up, down);
        },
        data(client, bytes) {
          client.data.up.push(bytes);
        },
        drain(client) {
          client.data.down.flush();
        },
        close(client) {
          client.data.up.end();
        },
        error() {},
      },
    });
  }

  private async connectUpstream(up: Pipe, down: Pipe): Promise<void> {
    try {
      up.to = await Bun.connect<Link>({
        hostname: this.target.host,
        port: this.target.port,
        data: { up, down },
        socket: {
          data(upstream, bytes) {
            upstream.data.down.push(bytes);
          },
          drain(upstream) {
            upstream.data.up.flush();
          },
          close(upstream) {
            upstream.data.down.end();
          },
          error() {},
        },
      });
      up.flush();
    } catch {
      down.end();
    }
  }
}
