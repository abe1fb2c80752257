// fivebeans (callback style) driven with promises for the client test: the
// library itself is used unmodified; this only adapts its callbacks.

// @ts-expect-error fivebeans ships no type declarations.
import fivebeans from "fivebeans";

interface FiveBeansClient {
  on(event: string, listener: (...args: unknown[]) => void): FiveBeansClient;
  connect(): void;
  end(): void;
  [command: string]: unknown;
}

export class FiveBeans {
  private constructor(private readonly client: FiveBeansClient) {}

  static connect(port: number): Promise<FiveBeans> {
    return new Promise((resolve, reject) => {
      const client = new fivebeans.client("127.0.0.1", port) as FiveBeansClient;
      client.on("connect", () => resolve(new FiveBeans(client))).on("error", (error) => reject(error));
      client.connect();
    });
  }

  /** A command whose callback gives one value. */
  async call<T = unknown>(command: string, ...args: unknown[]): Promise<T> {
    return (await this.callMany(command, ...args))[0] as T;
  }

  /** A command whose callback gives several values (reserve: id and payload). */
  callMany(command: string, ...args: unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      const method = this.client[command] as (...a: unknown[]) => void;
      method.call(this.client, ...args, (error: unknown, ...values: unknown[]) => {
        if (error !== null && error !== undefined) reject(new Error(String(error)));
        else resolve(values);
      });
    });
  }

  end(): void {
    this.client.end();
  }
}
