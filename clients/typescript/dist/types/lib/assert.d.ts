export declare class AssertionError extends Error {
    name: string;
}
export declare function assert(condition: unknown, message?: string): asserts condition;
