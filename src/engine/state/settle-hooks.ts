// Hooks run once the op's WriteSet has settled (its commit landed or failed,
// or the set was refused), for the rare writer that must know when its write
// is no longer on the way: ops/pause.ts, whose cluster poll must not apply a
// database row read before this node's own pause write lands. They ride the
// set's promise, not its one listener, which stays the op's (storage/writer.ts).

import type { Commit } from "../../storage/writer.ts";

export class SettleHooks {
  /** Hooks for the open set: null, the usual case, when none. */
  private hooks: Array<() => void> | null = null;

  /** Run `hook` once the open set's commit settles. */
  add(hook: () => void): void {
    (this.hooks ??= []).push(hook);
  }

  /** The open set closed as `commit`: its hooks run when it settles. Returns `commit`. */
  attach(commit: Commit): Commit {
    const hooks = this.hooks;
    if (hooks === null) return commit;
    this.hooks = null;
    const run = (): void => {
      for (const hook of hooks) hook();
    };
    commit.promise().then(run, run);
    return commit;
  }
}
