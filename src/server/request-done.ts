// The one hook both front ends call once per answered request: the
// MessagePack port's dispatcher for each request, the beanstalkd port's
// connections for each command. `orq serve` gives both the same function,
// which counts the request in the request metrics and lets it arm the memory
// collectors (the idle collection, the heap governor and, on the governor's
// tick, the LMDB map-page drops), so traffic is measured, and its garbage
// collected, the same whichever port it came through.

/**
 * One answered request: `op` is its label in the request metrics, `code` "OK"
 * or the protocol's error code (or, on the beanstalkd port, its negative
 * answer: beanstalk/request-labels.ts), `durationMs` from its arrival to its
 * answer being queued, any wait included.
 */
export type RequestDone = (op: string, code: string, durationMs: number) => void;
