/** An id's two numbers. */
export interface IdParts {
    shard: number;
    key: number;
}
/** The shard and key an id names, or null when the text is not an id. */
export declare function parseId(text: string): IdParts | null;
/** A receipt's numbers, filled by readReceipt: callers keep one and reuse it (no allocation per receipt). */
export declare class ReceiptFields {
    shard: number;
    key: number;
    deliveries: number;
    boot: number;
}
/** Read a receipt's shard, key, delivery count and boot into `into`; false (fields unspecified) when the text is not a receipt. */
export declare function readReceipt(text: string, into: ReceiptFields): boolean;
/**
 * The shard an id or a receipt names, or null when the text is neither (the
 * whole text is checked, not only its prefix). Allocates nothing: routing
 * calls it once per id or receipt of a request.
 */
export declare function shardOfIdOrReceipt(text: string): number | null;
