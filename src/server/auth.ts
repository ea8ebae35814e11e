// Bearer tokens per tenant, each allowed to report on a list of scopes (or all: '*').
// Tokens are report-only credentials: they let a client add its own counts to a
// scope's aggregate and read it, nothing else, so shipping one to browsers is fine.
export interface TenantGrant {
  tenant: string
  scopes: readonly string[] | '*'
  /**
   * A trusted token (keep it secret: a server-side fleet, not a web page) is not bounded per
   * source address, and its quota hints are taken as given rather than waiting for agreement.
   */
  trusted?: boolean
}

export interface AuthOptions {
  /** Bearer token → grant. */
  tokens: Record<string, TenantGrant>
}

export type AuthResult =
  | { ok: true; tenant: string; trusted: boolean; allows(scope: string): boolean }
  | { ok: false; status: 401; error: string }

/** The tenant every report belongs to in open mode. */
export const OPEN_TENANT = 'open'

const OPEN: AuthResult = { ok: true, tenant: OPEN_TENANT, trusted: false, allows: () => true }

export interface Authenticator {
  /** `authorization` header value (or null) → who is calling. */
  check(header: string | null): AuthResult
  readonly open: boolean
  /** The tenants tokens map to (just the open tenant in open mode). */
  readonly tenants: readonly string[]
}

/** The bearer token of an `authorization` header value, or undefined. */
export function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
}

/** Compare secrets without an early exit, so the time taken does not say how much of one matched. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/** `auth` omitted or `false` = open mode (development only): anyone may report on any scope. */
export function createAuthenticator(auth: AuthOptions | false | undefined): Authenticator {
  if (!auth) return { check: () => OPEN, open: true, tenants: [OPEN_TENANT] }
  const grants = new Map<string, AuthResult>()
  // The header as clients send it (`Bearer <token>`) → grant: one lookup per request, no regex.
  const byHeader = new Map<string, AuthResult>()
  for (const [token, grant] of Object.entries(auth.tokens)) {
    const scopes = grant.scopes === '*' ? undefined : new Set(grant.scopes)
    const result: AuthResult = { ok: true, tenant: grant.tenant, trusted: grant.trusted === true, allows: (scope) => !scopes || scopes.has(scope) }
    grants.set(token, result)
    if (bearerToken(`Bearer ${token}`) === token) byHeader.set(`Bearer ${token}`, result)
  }
  return {
    open: false,
    tenants: [...new Set(Object.values(auth.tokens).map((grant) => grant.tenant))],
    check(header) {
      if (!header) return { ok: false, status: 401, error: 'missing bearer token' }
      const known = byHeader.get(header)
      if (known) return known
      const token = bearerToken(header)
      const grant = token === undefined ? undefined : grants.get(token)
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
