// The states a live item is in, as the contract names them: the one list, in
// the contract's order (the order `topics`, `stats` and every table of counts
// show them). `get` and `list` report an item's state by these names, `list`
// filters by them, and the metrics label item counts with them.

export const liveStateNames = ["ready", "delayed", "waiting", "leased", "dead"] as const;

export type LiveStateName = (typeof liveStateNames)[number];
