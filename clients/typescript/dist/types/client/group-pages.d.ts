import type { GroupPage } from "./types.ts";
export declare function mergeGroupPages(pages: readonly GroupPage[], limit?: number): GroupPage;
