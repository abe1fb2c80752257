export declare const liveStateNames: readonly ["ready", "delayed", "waiting", "leased", "dead"];
export type LiveStateName = (typeof liveStateNames)[number];
