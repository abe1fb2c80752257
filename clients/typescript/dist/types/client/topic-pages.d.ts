import type { TopicCounts } from "./types.ts";
export interface TopicPage {
    topics: TopicCounts[];
    next: string | null;
}
export declare function mergeTopicPages(pages: readonly TopicPage[], limit?: number): TopicPage;
