// What the PostgreSQL store's commits cost the database, counted as they are
// sent: commits, network round trips (each awaited exchange with the server)
// row writes (each row a statement inserted, updated or deleted, as
// PostgreSQL reports them) and the record bytes sent. Decision 036 reads them per item lifecycle; they are
// the numbers a change of the commit's SQL must move.

export interface CommitCounts {
  /** Commits that ran a transaction (a commit with nothing to write runs none). */
  commits: number;
  /** Awaited exchanges with PostgreSQL on behalf of commits. */
  roundTrips: number;
  /** Rows written: inserted, updated or deleted, as PostgreSQL reported them. */
  rowWrites: number;
  /** Bytes of record values sent (whole values, or the prefixes of patched ones). */
  valueBytes: number;
}

export class CommitCounters implements CommitCounts {
  commits = 0;
  roundTrips = 0;
  rowWrites = 0;
  valueBytes = 0;

  snapshot(): CommitCounts {
    return { commits: this.commits, roundTrips: this.roundTrips, rowWrites: this.rowWrites, valueBytes: this.valueBytes };
  }
}
