// Token authentication and namespace scopes. Tokens are compared in constant
// time: the presented token and every configured one are hashed to SHA-256
// digests of equal length and compared with timingSafeEqual, and every
// configured token is checked (no early exit), so timing reveals neither a
// matching prefix nor which entry matched. Tokens are never logged.

import { createHash, timingSafeEqual } from "node:crypto";

/** What a token may do: "write" (the default) every op; "read" only the ops that change nothing (OpSpec.changesState false). */
export type TokenRole = "read" | "write";

export interface TokenGrant {
  token: string;
  /** Namespaces the token may use; "*" allows every namespace. */
  namespaces: string[];
  /** Absent means "write". */
  role?: TokenRole;
}

/** What a token grants: its namespace scope and whether it is limited to read-only ops. */
export interface Access {
  scope: NamespaceScope;
  readOnly: boolean;
}

/** What an authenticated connection may touch. */
export type NamespaceScope = { all: true } | { all: false; namespaces: ReadonlySet<string> };

export const allNamespaces: NamespaceScope = Object.freeze({ all: true });

export function scopeAllows(scope: NamespaceScope, ns: string): boolean {
  return scope.all || scope.namespaces.has(ns);
}

/** The namespaces to pass to engine.stats: null = every namespace. */
export function scopeList(scope: NamespaceScope): string[] | null {
  return scope.all ? null : [...scope.namespaces];
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export class TokenTable {
  private readonly entries: Array<{ digest: Buffer; access: Access }>;

  constructor(grants: readonly TokenGrant[]) {
    this.entries = grants.map((grant) => ({
      digest: digest(grant.token),
      access: {
        scope: grant.namespaces.includes("*") ? allNamespaces : { all: false as const, namespaces: new Set(grant.namespaces) },
        readOnly: grant.role === "read",
      },
    }));
  }

  /** With no token configured, every connection may do everything. */
  get required(): boolean {
    return this.entries.length > 0;
  }

  /** The scope a token grants, or null when it matches no configured token. */
  lookup(token: string): NamespaceScope | null {
    return this.access(token)?.scope ?? null;
  }

  /** The scope and role a token grants, or null when it matches no configured token. */
  access(token: string): Access | null {
    const presented = digest(token);
    let found: Access | null = null;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.digest) && found === null) found = entry.access;
    }
    return found;
  }
}
