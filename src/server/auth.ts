// Bearer tokens per tenant, each allowed to report on a list of scopes (or all: '*').
// Tokens are report-only credentials: they let a client add its own counts to a
// scope's aggregate and read it, nothing else, so shipping one to browsers is fine.
export interface TenantGrant {
  tenant: string
  scopes: readonly string[] | '*'
}

export interface AuthOptions {
  /** Bearer token → grant. */
  tokens: Record<string, TenantGrant>
}

export type AuthResult =
  | { ok: true; tenant: string; allows(scope: string): boolean }
  | { ok: false; status: 401; error: string }

const OPEN: AuthResult = { ok: true, tenant: 'anonymous', allows: () => true }

export interface Authenticator {
  /** `authorization` header value (or null) → who is calling. */
  check(header: string | null): AuthResult
  readonly open: boolean
}

/** `auth` omitted or `false` = open mode (development only): anyone may report on any scope. */
export function createAuthenticator(auth: AuthOptions | false | undefined): Authenticator {
  if (!auth) return { check: () => OPEN, open: true }
  const grants = new Map<string, AuthResult>()
  for (const [token, grant] of Object.entries(auth.tokens)) {
    const scopes = grant.scopes === '*' ? undefined : new Set(grant.scopes)
    grants.set(token, { ok: true, tenant: grant.tenant, allows: (scope) => !scopes || scopes.has(scope) })
  }
  return {
    open: false,
    check(header) {
      if (!header) return { ok: false, status: 401, error: 'missing bearer token' }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      const grant = match ? grants.get(match[1]!) : undefined
      return grant ?? { ok: false, status: 401, error: 'unknown bearer token' }
    },
  }
}

/**
 * CLI form `[tenant=]token:scope1,scope2` (or `…:*` for every scope). Without `tenant=`
 * the tenant is named after the argument's position (`tenant-1`, …).
 */
export function parseTokenArg(value: string, index: number): [string, TenantGrant] | undefined {
  const colon = value.indexOf(':')
  if (colon <= 0) return undefined
  let token = value.slice(0, colon)
  let tenant = `tenant-${index + 1}`
  const equals = token.indexOf('=')
  if (equals >= 0) {
    tenant = token.slice(0, equals)
    token = token.slice(equals + 1)
  }
  if (!tenant || !/^\S+$/.test(token)) return undefined
  const list = value.slice(colon + 1)
  const scopes = list === '*' ? '*' : list.split(',').map((s) => s.trim()).filter(Boolean)
  if (scopes !== '*' && scopes.length === 0) return undefined
  return [token, { tenant, scopes }]
}
