import type { LiveStateName } from "../protocol/live-states.ts";
import type { WireMap } from "./transport.ts";
import type { GroupCounts, ItemExplanation, Policy, PolicyInput, PolicyResult } from "./types.ts";
export interface WirePolicy {
    group?: string;
    weight?: number;
    max_leased?: number;
    rate?: {
        count: number;
        per_ms: number;
    };
}
export interface WireGroupCounts {
    group: string | null;
    ready: number;
    delayed: number;
    waiting: number;
    leased: number;
    /** Not in every server's reply: the contract's table lists the other counts only. */
    dead?: number;
    paused?: boolean;
    paused_until_ms?: number;
}
interface WireExplainReason {
    reason: string;
    until_ms?: number;
    after?: string[];
    dead_reason?: string;
    leased?: number;
    max?: number;
    next_at_ms?: number;
    kinds?: Array<{
        failed: string[];
    }>;
    ahead?: number;
}
export interface WireItemExplanation {
    id: string;
    state: LiveStateName;
    reasons: WireExplainReason[];
}
/** A `policy` request's fields (without ns): absent bounds are left out, which the contract reads as no such bound. */
export declare function policyRequestFields(topic: string, input: PolicyInput): WireMap;
export declare function policyFromWire(p: WirePolicy): Policy;
/** The `policy` reply: the policy as stored, or whether `clear` found one. */
export declare function policyResultFromWire(reply: WireMap): PolicyResult;
export declare function groupCountsFromWire(g: WireGroupCounts): GroupCounts;
export declare function explanationFromWire(e: WireItemExplanation | null): ItemExplanation | null;
export {};
