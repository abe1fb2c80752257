// The item key type, in a file of its own so the storage files below the
// Store interface (acked-log.ts) can name it without importing store.ts,
// which imports them.

/** A key within a shard: an unsigned integer below 2^53 (stored as 64 bits). */
export type ItemKey = number;
