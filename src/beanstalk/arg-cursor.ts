// Reading a command line's arguments the way beanstalkd's read_u32, read_u64
// and read_tube_name do: spaces before a number are skipped, a number must
// start with a digit, and a value past its width is BAD_FORMAT. Whether
// trailing text is allowed differs per command, so callers ask `atEnd()`.

import { nameCharsAt } from "./tube-names.ts";

const uint32Max = 2 ** 32 - 1;
const uint64Max = 2n ** 64n - 1n;

export class ArgCursor {
  constructor(
    private readonly text: string,
    private pos: number,
  ) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  /** The rest of the line from here, unread. */
  rest(): string {
    return this.text.slice(this.pos);
  }

  /** An unsigned 32-bit number, or null (nothing moved). */
  u32(): number | null {
    const digits = this.digits();
    if (digits === null) return null;
    const value = Number(digits);
    if (value > uint32Max) return null;
    this.pos = this.afterDigits;
    return value;
  }

  /** An unsigned 64-bit number as its decimal digits, or null (nothing moved). */
  u64(): string | null {
    const digits = this.digits();
    if (digits === null || digits.length > 20 || BigInt(digits) > uint64Max) return null;
    this.pos = this.afterDigits;
    return digits;
  }

  /** A run of tube-name characters after spaces (read_tube_name), or null when there is none. */
  name(): string | null {
    let start = this.pos;
    while (this.text.charCodeAt(start) === 32) start++;
    const length = nameCharsAt(this.text, start);
    if (length === 0) return null;
    this.pos = start + length;
    return this.text.slice(start, start + length);
  }

  private afterDigits = 0;

  private digits(): string | null {
    let start = this.pos;
    while (this.text.charCodeAt(start) === 32) start++;
    let end = start;
    while (end < this.text.length) {
      const c = this.text.charCodeAt(end);
      if (c < 48 || c > 57) break;
      end++;
    }
    if (end === start) return null;
    this.afterDigits = end;
    return this.text.slice(start, end);
  }
}
