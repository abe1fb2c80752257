// Token authentication and namespace scopes. Tokens are compared in constant
// time: the presented token and every configured one are hashed to SHA-256
// digests of equal length and compared with timingSafeEqual, and every
// configured token is checked (no early exit), so timing reveals neither a
// matching prefix nor which entry matched. Tokens are never logged.

import { createHash, timingSafeEqual } from "node:crypto";

export interface TokenGrant {
  token: string;
  /** Namespaces the token may use; "*" allows every namespace. */
  namespaces: string[];
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
  private readonly entries: Array<{ digest: Buffer; scope: NamespaceScope }>;

  constructor(grants: readonly TokenGrant[]) {
    this.entries = grants.map((grant) => ({
      digest: digest(grant.token),
      scope: grant.namespaces.includes("*")
        ? allNamespaces
        : { all: false as const, namespaces: new Set(grant.namespaces) },
    }));
  }

  /** With no token configured, every connection may do everything. */
  get required(): boolean {
    return this.entries.length > 0;
  }

  /** The scope a token grants, or null when it matches no configured token. */
  lookup(token: string): NamespaceScope | null {
    const presented = digest(token);
    let found: NamespaceScope | null = null;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.digest) && found === null) found = entry.scope;
    }
    return found;
  }
}
