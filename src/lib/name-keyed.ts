// A plain record whose keys are names clients chose (namespaces, topics).
// It has no prototype, so a name such as `__proto__` or `constructor` is an
// entry like any other: on an ordinary `{}`, assigning `__proto__` replaces
// the object's prototype instead of adding a key, and the entry is lost.

/** An empty record with no prototype, for keys that come from clients. */
export function nameKeyed<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
