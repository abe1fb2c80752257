// The statements of shard ownership (shard-ownership.ts), kept apart so the
// rules read in one place. Every comparison of a lease with the time uses the
// database's clock (now(), the transaction's start), so two nodes never judge
// one lease by different clocks. A claim raises the shard's epoch; a commit
// by the previous owner checks the epoch under FOR SHARE (shard-fence.ts), so
// the claim's UPDATE waits for that commit and the commit cannot follow the
// claim. $lease parameters are milliseconds.

/**
 * Register this node, unless a node with its id is live (its last heartbeat
 * younger than that node's own lease). Returns a row when registered.
 */
export const registerNodeSql = `INSERT INTO orq_nodes (node_id, addr, incarnation, heartbeat_at, lease_ms)
  VALUES ($1, $2, $3, now(), $4)
  ON CONFLICT (node_id) DO UPDATE SET addr = EXCLUDED.addr, incarnation = EXCLUDED.incarnation, heartbeat_at = now(), lease_ms = EXCLUDED.lease_ms
  WHERE orq_nodes.heartbeat_at < now() - make_interval(secs => orq_nodes.lease_ms::double precision / 1000)
  RETURNING 1`;

/** The node row with this id: how many ms ago it last beat (by the database's clock), and its lease. */
export const nodeRowSql = `SELECT extract(epoch FROM now() - heartbeat_at) * 1000, lease_ms FROM orq_nodes WHERE node_id = $1`;

/** This incarnation's heartbeat. No row back: another process took the node id (this one was presumed dead). */
export const heartbeatSql = `UPDATE orq_nodes SET heartbeat_at = now(), addr = $3
  WHERE node_id = $1 AND incarnation = $2 RETURNING 1`;

/** Renew the shards this node holds at the epochs it holds them; returns the shards renewed. */
export const renewSql = `UPDATE orq_shards AS s SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
  FROM unnest($3::integer[], $4::bigint[]) AS h(shard, epoch)
  WHERE s.shard = h.shard AND s.epoch = h.epoch AND s.owner = $1
  RETURNING s.shard`;

/**
 * Claim up to $3 shards that have no owner or whose lease ran out: the lowest
 * numbers first, skipping rows another claimer has locked, and re-checked
 * after any wait (READ COMMITTED re-evaluates the WHERE on the new row).
 */
export const claimSql = `UPDATE orq_shards AS s SET owner = $1, epoch = s.epoch + 1,
    lease_until = now() + make_interval(secs => $2::double precision / 1000)
  WHERE s.shard IN (
      SELECT shard FROM orq_shards
      WHERE owner IS NULL OR lease_until IS NULL OR lease_until < now()
      ORDER BY shard = ANY($4::integer[]) DESC, shard LIMIT $3 FOR UPDATE SKIP LOCKED)
    AND (s.owner IS NULL OR s.lease_until IS NULL OR s.lease_until < now())
  RETURNING s.shard, s.epoch`;

/** Give shards up at the epochs this node holds them: no owner, and the epoch raised so the map's version grows. */
export const releaseSql = `UPDATE orq_shards AS s SET owner = NULL, lease_until = NULL, epoch = s.epoch + 1
  FROM unnest($2::integer[], $3::bigint[]) AS h(shard, epoch)
  WHERE s.shard = h.shard AND s.epoch = h.epoch AND s.owner = $1
  RETURNING s.shard`;

/** Every shard's owner (null when its lease ran out), epoch, and the ms its owner's lease has left (null when none). */
export const shardsSql = `SELECT shard, CASE WHEN lease_until >= now() THEN owner END, epoch,
    CASE WHEN lease_until >= now() THEN extract(epoch FROM lease_until - now()) * 1000 END
  FROM orq_shards ORDER BY shard`;

/** The live nodes (heartbeat within their own lease), by id. */
export const liveNodesSql = `SELECT node_id, addr FROM orq_nodes
  WHERE heartbeat_at >= now() - make_interval(secs => lease_ms::double precision / 1000) ORDER BY node_id`;

/** Leave the cluster: the node row goes, so the others rebalance at once. */
export const leaveSql = `DELETE FROM orq_nodes WHERE node_id = $1 AND incarnation = $2`;
