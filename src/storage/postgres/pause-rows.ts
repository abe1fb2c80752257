// Pauses in PostgreSQL (the `pause` op, of a topic or of one group): one row
// per (ns, topic, group) in orq_pauses, under store.ts's pauseKey, and the
// counter in orq_pause_version that every commit writing pauses raises. The
// rows are shared between running nodes by the poll shared-rows.ts
// describes; this file names the tables and says how a poll compares a row
// with the engine's pause.

import { decodePauseRecord, encodePauseRecord } from "../record-codec.ts";
import type { PauseRecord } from "../record.ts";
import { pauseKey } from "../store.ts";
import { createSharedTablesSql, type EngineRows, type RowScope, SharedRows, type SharedTables } from "./shared-rows.ts";

const pauseTables: SharedTables = { rows: "orq_pauses", version: "orq_pause_version" };

export const createPauseTablesSql = createSharedTablesSql(pauseTables);

/** The pause rows a store keeps (SharedRows of pause records). */
export type PauseRows = SharedRows<PauseRecord>;

export function pauseRows(): PauseRows {
  return new SharedRows(pauseTables, { encode: encodePauseRecord, decode: decodePauseRecord, key: pauseKey });
}

/** What a pause poll asks the engine about a topic's (group null) or group's pause. */
export interface EnginePauses {
  /** The pause now: its end (null: until resume), or undefined when not paused. */
  pausedUntil(ns: string, topic: string, group: string | null): number | null | undefined;
  /** Whether the engine's own write of the pause has not landed yet (queued, or in a commit). */
  writing(ns: string, topic: string, group: string | null): boolean;
}

/** The engine's pauses as a poll asks them: it holds a row when its pause has the row's end (or it has none and there is no row). */
export function enginePauseRows(engine: EnginePauses): EngineRows<PauseRecord> {
  return {
    writing: (scope: RowScope) => engine.writing(scope.ns, scope.topic, scope.group),
    holds: (scope: RowScope, seen: PauseRecord | null) => engine.pausedUntil(scope.ns, scope.topic, scope.group) === (seen === null ? undefined : seen.untilMs),
  };
}
