// How the CLI shows the items a `wait` (or an `ack` result) answers, read
// from the wire's maps: an ended item with its outcome and result, a live one
// with its state and metadata (progress). Byte fields follow output.ts: text
// when UTF-8, else base64 in --json and a hex summary for people.

import { block, bytesForHuman, bytesToJson } from "./output.ts";

/** One entry of a `wait` reply, as the wire has it (the fields this view reads). */
export interface WaitedState {
  id: string;
  state: string;
  outcome?: string;
  result?: Uint8Array;
  topic?: string;
  metadata?: Uint8Array;
}

export function waitedStateToJson(s: WaitedState | null): Record<string, unknown> | null {
  if (s === null) return null;
  if (s.state === "ended") return { id: s.id, state: s.state, outcome: s.outcome, ...(s.result === undefined ? {} : bytesToJson("result", s.result)) };
  return { id: s.id, topic: s.topic, state: s.state, ...(s.metadata === undefined ? {} : bytesToJson("metadata", s.metadata)) };
}

export function waitedStateBlock(s: WaitedState): string {
  if (s.state === "ended") {
    const rows: Array<readonly [string, string]> = [["id", s.id], ["state", `ended (${s.outcome ?? "?"})`]];
    if (s.result !== undefined) rows.push(["result", bytesForHuman(s.result)]);
    return block(rows);
  }
  const rows: Array<readonly [string, string]> = [["id", s.id], ["topic", s.topic ?? ""], ["state", s.state]];
  if (s.metadata !== undefined && s.metadata.length > 0) rows.push(["metadata", bytesForHuman(s.metadata)]);
  return block(rows);
}
