// The IETF RateLimit header fields, in the three generations servers still emit
// (draft-ietf-httpapi-ratelimit-headers):
//   -08…-10  RateLimit: "burst";r=50;t=30   RateLimit-Policy: "burst";q=100;w=60, "daily";q=1000;w=86400
//   -07      RateLimit: limit=100, remaining=50, reset=5   RateLimit-Policy: 100;w=10
//   -00…-06  RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (GitLab adds RateLimit-Name)
// Several field lines arrive joined with ", ", which is exactly SF List syntax.
// A field that does not parse is ignored as a whole (the draft: malformed → ignore).
// Field names are case-insensitive, so Cloudflare's `Ratelimit`/`Ratelimit-Policy` are
// these fields; Atlassian sends the same syntax as `Beta-RateLimit`/`Beta-RateLimit-Policy`
// and each pair is read on its own (a limit names a policy of its own pair).
// Parameters: `pk` (partition key, a Byte Sequence) is parsed and ignored: a key the
// server chose tells a client nothing it can pace by. The working group's discussion of
// draft -10 (ietf-wg-httpapi/ratelimit-headers PR #164) proposes renaming the limit's
// `r` (remaining) to `a` (available) and `t` (reset) to `w` (effective window); both
// spellings are read, the current one first.
import type { QuotaPolicy } from '../types.js'
import { readField, type HeaderSource } from './header-source.js'
import { DEFAULT_POLICY, REQUESTS_UNIT, type Observations } from './limit-observation.js'
import { parseCount } from './parse-number.js'
import type { TimeBase } from './reset-time.js'
import { isInnerList, parseSfDictionary, parseSfList, type SfBareItem, type SfMember } from './structured-field.js'

/** Present on every response that uses one of the generations above. */
export const IETF_SENTINELS = [
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-remaining',
  'beta-ratelimit',
  'beta-ratelimit-policy',
] as const

export function readIetfRateLimit(headers: HeaderSource, time: TimeBase, out: Observations): void {
  const policies = readPair(headers, 'ratelimit', 'ratelimit-policy', time, out)
  const remaining = parseCount(readField(headers, 'ratelimit-remaining'))
  if (remaining !== undefined) readSeparate(headers, remaining, policies, time, out)
  readPair(headers, 'beta-ratelimit', 'beta-ratelimit-policy', time, out)
}

/** One `RateLimit` + `RateLimit-Policy` pair (under either spelling); returns its policies. */
function readPair(headers: HeaderSource, limitName: string, policyName: string, time: TimeBase, out: Observations): QuotaPolicy[] {
  const policyField = readField(headers, policyName)
  const policies = policyField === undefined ? [] : readPolicies(policyField)
  for (const policy of policies) out.policies.push(policy)
  const combined = readField(headers, limitName)
  if (combined !== undefined) readCombined(combined, policies, time, out)
  return policies
}

/** `RateLimit-Policy`: named items (-08+) or bare quota numbers (-07 and earlier). Bad members are skipped. */
function readPolicies(field: string): QuotaPolicy[] {
  const members = parseSfList(field)
  if (members === undefined) return []
  const policies: QuotaPolicy[] = []
  for (const member of members) {
    if (isInnerList(member)) continue
    const { value, params } = member
    let name: string
    let quota: number | undefined
    if (typeof value === 'number') {
      name = DEFAULT_POLICY
      quota = asCount(value)
    } else if (typeof value === 'string') {
      name = value
      quota = asCount(params.get('q'))
    } else {
      continue
    }
    if (quota === undefined) continue
    const policy: QuotaPolicy = { name, quota, unit: asUnit(params.get('qu')) }
    const windowSeconds = params.get('w')
    if (typeof windowSeconds === 'number' && windowSeconds > 0) policy.windowMs = windowSeconds * 1000
    policies.push(policy)
  }
  return policies
}

/** `RateLimit`: a List of named service limits (-08+), else a -07 Dictionary. */
function readCombined(field: string, policies: QuotaPolicy[], time: TimeBase, out: Observations): void {
  const list = parseSfList(field)
  if (list !== undefined && list.some(hasRemainingParam)) {
    for (const member of list) {
      if (isInnerList(member) || typeof member.value !== 'string') continue
      const remaining = asCount(member.params.get('r')) ?? asCount(member.params.get('a'))
      if (remaining === undefined) continue
      const policy = policies.find((candidate) => candidate.name === member.value)
      out.limits.push({
        name: member.value,
        named: true,
        unit: policy?.unit ?? REQUESTS_UNIT,
        remaining,
        limit: policy?.quota,
        resetAt: resetFrom(member.params.get('t'), time) ?? resetFrom(member.params.get('w'), time),
      })
    }
    return
  }

  const dictionary = parseSfDictionary(field)
  if (dictionary === undefined) return
  const remaining = asCount(itemValue(dictionary.get('remaining')))
  if (remaining === undefined) return
  const limit = asCount(itemValue(dictionary.get('limit')))
  out.limits.push({
    name: DEFAULT_POLICY,
    named: false,
    unit: REQUESTS_UNIT,
    remaining,
    limit,
    resetAt: resetFrom(itemValue(dictionary.get('reset')), time),
  })
  if (limit !== undefined) out.policies.push({ name: DEFAULT_POLICY, quota: limit, unit: REQUESTS_UNIT, ...windowOf(policies, limit) })
}

/** Drafts -00…-06 and GitLab. `RateLimit-Limit` may carry policies after the number ("10, 10;w=1"). */
function readSeparate(
  headers: HeaderSource,
  remaining: number,
  policies: QuotaPolicy[],
  time: TimeBase,
  out: Observations,
): void {
  const limitField = readField(headers, 'ratelimit-limit')
  const limit = limitField === undefined ? undefined : parseCount(limitField.split(';', 1)[0])
  const resetField = readField(headers, 'ratelimit-reset')
  const reset = parseCount(resetField)
  const name = readField(headers, 'ratelimit-name')?.trim()
  const policyName = name === undefined || name === '' ? DEFAULT_POLICY : name
  out.limits.push({
    name: policyName,
    named: policyName !== DEFAULT_POLICY,
    unit: REQUESTS_UNIT,
    remaining,
    limit,
    resetAt: reset === undefined ? undefined : time.atReset(reset),
  })
  if (limit !== undefined) out.policies.push({ name: policyName, quota: limit, unit: REQUESTS_UNIT, ...windowOf(policies, limit) })
}

function hasRemainingParam(member: SfMember): boolean {
  return !isInnerList(member) && (member.params.has('r') || member.params.has('a'))
}

function itemValue(member: SfMember | undefined): SfBareItem | undefined {
  return member === undefined || isInnerList(member) ? undefined : member.value
}

function asCount(value: SfBareItem | undefined): number | undefined {
  if (typeof value !== 'number' || !(value >= 0)) return undefined
  return value === 0 ? 0 : value // "-0" is a valid sf-integer; report it as a plain 0
}

function asUnit(value: SfBareItem | undefined): string {
  return typeof value === 'string' && value !== '' ? value : REQUESTS_UNIT
}

/**
 * `t` (or `w`) is delay-seconds by the draft; an epoch-sized value is read as the epoch it
 * obviously is rather than as a 30-year wait (see reset-time.ts).
 */
function resetFrom(value: SfBareItem | undefined, time: TimeBase): number | undefined {
  return typeof value === 'number' ? time.atReset(value) : undefined
}

/** The window of the announced unnamed policy with this quota (-07: `RateLimit-Policy: 100;w=10`). */
function windowOf(policies: QuotaPolicy[], quota: number): { windowMs?: number } {
  const match = policies.find((policy) => policy.name === DEFAULT_POLICY && policy.quota === quota)
  return match?.windowMs === undefined ? {} : { windowMs: match.windowMs }
}

