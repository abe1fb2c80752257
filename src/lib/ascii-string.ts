// A string from bytes known to be ASCII, in one native call. The request
// decoder (protocol/short-string-cache.ts) and the record codec
// (storage/byte-cursor.ts) both build many short strings; built a char at a
// time, each is also a rope that the first Map lookup of it must flatten
// (decisions/052).

const bufferToString = Buffer.prototype.toString;

/**
 * Builds a string from bytes the caller has checked are all ASCII (below
 * 0x80), where latin1 and UTF-8 agree. Buffer's latin1 decoding is one
 * native call, about 40 ns at any length up to 64 bytes on the build machine,
 * where appending one char code at a time costs about 10 ns a byte (20 bytes:
 * 250 ns). It accepts any Uint8Array, not only a Buffer.
 */
export function asciiString(bytes: Uint8Array, start: number, length: number): string {
  return bufferToString.call(bytes, "latin1", start, start + length);
}
