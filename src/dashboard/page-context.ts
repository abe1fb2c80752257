// What every page handler receives, and what it returns. A page is a title,
// an optional part that the browser re-fetches every few seconds (`live`,
// requested again with ?part=live), and static parts around it.

import type { ServerInfo } from "../server/op-types.ts";
import type { BreakerState } from "../storage/circuit-breaker.ts";
import type { RecentValuesFigures } from "../storage/store.ts";
import type { History } from "./history.ts";
import type { Html } from "./html.ts";
import type { OpCaller } from "./op-caller.ts";
import type { ScopedInspector } from "./scoped-inspector.ts";
import type { DashboardSession } from "./sessions.ts";

/** Server-wide numbers for the overview's server panel that no op reports. */
export interface ServerPanel {
  commitMsP50: number | null;
  commitMsP99: number | null;
  /** Commits the percentiles are computed over (the most recent ones). */
  commitSamples: number;
  /** The store's one circuit breaker (opened by failing commits only). */
  breaker: BreakerState;
  /** The LMDB store's ring of recent items' payloads (docs/decisions/044-recent-values.md); null without one. */
  recentValues: RecentValuesFigures | null;
}

export interface PageContext {
  session: DashboardSession;
  ops: OpCaller;
  inspector: ScopedInspector;
  history: History;
  url: URL;
  nowMs: number;
  serverInfo: ServerInfo;
  serverPanel(): ServerPanel;
  /** The namespace the page shows (?ns=, else the first visible one). */
  ns: string;
  /** Namespaces this session may see that exist or that its token names. */
  namespaces: readonly string[];
  /** A notice to show once (after a change), from ?notice=. */
  notice: string | null;
}

export interface PageResult {
  title: string;
  /** Above the live part (forms, charts): not re-fetched. */
  top?: Html;
  /** Re-fetched every refresh when set. */
  live?: Html;
  bottom?: Html;
}

export type PageHandler = (ctx: PageContext) => Promise<PageResult>;
