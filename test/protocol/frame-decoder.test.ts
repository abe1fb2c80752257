// Goal: the streaming frame decoder yields exactly the frames sent, however the
// byte stream is cut (one byte at a time, split at every offset, many frames
// per chunk), rejects over-long frames, and pauses/resumes without losing or
// reordering bytes.

import { describe, expect, test } from "bun:test";
import { FrameDecoder, type FrameSink } from "../../src/protocol/frame-decoder.ts";
import { FrameEncoder } from "../../src/protocol/frame-encoder.ts";

function collector(pauseEvery = 0) {
  const frames: Uint8Array[] = [];
  const tooLarge: number[] = [];
  const sink: FrameSink = {
    frame(bytes, start, end) {
      frames.push(bytes.slice(start, end));
      return pauseEvery === 0 || frames.length % pauseEvery !== 0;
    },
    frameTooLarge(length) {
      tooLarge.push(length);
    },
  };
  return { frames, tooLarge, sink };
}

function frameOf(body: number[]): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const bodies = [[1, 2, 3], [], [9], Array.from({ length: 300 }, (_, i) => i & 0xff), [7, 7]];
const stream = concat(bodies.map(frameOf));

describe("FrameDecoder", () => {
  test("one chunk with many frames yields each frame in order", () => {
    const c = collector();
    new FrameDecoder(1024, c.sink).push(stream);
    expect(c.frames.map((f) => [...f])).toEqual(bodies);
  });

  test("fed one byte at a time", () => {
    const c = collector();
    const decoder = new FrameDecoder(1024, c.sink);
    for (let i = 0; i < stream.length; i++) decoder.push(stream.subarray(i, i + 1));
    expect(c.frames.map((f) => [...f])).toEqual(bodies);
  });

  test("split into two chunks at every offset", () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const c = collector();
      const decoder = new FrameDecoder(1024, c.sink);
      decoder.push(stream.slice(0, cut));
      decoder.push(stream.slice(cut));
      expect(c.frames.map((f) => [...f])).toEqual(bodies);
    }
  });

  test("split into three chunks at many offset pairs", () => {
    for (let a = 0; a <= stream.length; a += 3) {
      for (let b = a; b <= stream.length; b += 7) {
        const c = collector();
        const decoder = new FrameDecoder(1024, c.sink);
        decoder.push(stream.slice(0, a));
        decoder.push(stream.slice(a, b));
        decoder.push(stream.slice(b));
        expect(c.frames.length).toBe(bodies.length);
      }
    }
  });

  test("a caller's chunk may be overwritten after push: split frames were copied", () => {
    const c = collector();
    const decoder = new FrameDecoder(1024, c.sink);
    const chunk = stream.slice(0, 10);
    decoder.push(chunk);
    chunk.fill(0xee);
    decoder.push(stream.slice(10));
    expect(c.frames.map((f) => [...f])).toEqual(bodies);
  });

  test("length at the maximum is accepted; maximum + 1 is FRAME_TOO_LARGE and stops the decoder", () => {
    const max = 300;
    const ok = collector();
    new FrameDecoder(max, ok.sink).push(frameOf(new Array(max).fill(1)));
    expect(ok.frames.length).toBe(1);
    expect(ok.tooLarge).toEqual([]);

    const under = collector();
    new FrameDecoder(max, under.sink).push(frameOf(new Array(max - 1).fill(1)));
    expect(under.frames.length).toBe(1);

    const over = collector();
    const decoder = new FrameDecoder(max, over.sink);
    decoder.push(concat([frameOf([1]), frameOf(new Array(max + 1).fill(1)), frameOf([2])]));
    expect(over.frames.map((f) => [...f])).toEqual([[1]]);
    expect(over.tooLarge).toEqual([max + 1]);
    decoder.push(frameOf([3]));
    expect(over.frames.length).toBe(1);
  });

  test("a huge length announced in a header split across chunks is rejected without allocating", () => {
    const c = collector();
    const decoder = new FrameDecoder(4 * 1024 * 1024, c.sink);
    decoder.push(new Uint8Array([0xff, 0xff]));
    decoder.push(new Uint8Array([0xff, 0xff, 1, 2, 3]));
    expect(c.tooLarge).toEqual([0xffffffff]);
    expect(c.frames).toEqual([]);
  });

  test("the sink pausing keeps the rest; resume replays it in order", () => {
    for (let chunkSize = 1; chunkSize <= stream.length; chunkSize += 5) {
      const c = collector(2); // pause after every second frame
      const decoder = new FrameDecoder(1024, c.sink);
      for (let i = 0; i < stream.length; i += chunkSize) decoder.push(stream.slice(i, i + chunkSize));
      let guard = 0;
      while (decoder.paused && guard++ < 100) decoder.resume();
      expect(c.frames.map((f) => [...f])).toEqual(bodies);
      expect(decoder.backlogBytes).toBe(0);
    }
  });

  test("encoder output decodes back to the same frames", () => {
    const encoder = new FrameEncoder();
    const values = [{ id: 1, op: "ping" }, { id: 2, op: "x", payload: new Uint8Array([1, 2]) }];
    const c = collector();
    new FrameDecoder(1024, c.sink).push(concat(values.map((v) => encoder.encode(v))));
    expect(c.frames.length).toBe(2);
  });
});
