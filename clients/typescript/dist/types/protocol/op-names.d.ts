export declare const opNames: readonly ["hello", "ping", "enqueue", "dequeue", "ack", "nack", "extend", "cancel", "get", "topics", "dead", "redrive", "stats", "list", "pause", "resume", "cluster", "policy", "policies", "groups", "explain", "wait"];
export type OpName = (typeof opNames)[number];
export declare function isOpName(value: unknown): value is OpName;
