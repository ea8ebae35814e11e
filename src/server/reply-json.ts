// A reply's JSON text, written field by field. It is the text JSON.stringify gives for a
// reply built in protocol order (the aggregator's and the Redis store's), and one reply is
// written per report: callgrind counted ~4,000 instructions per report in V8's generic
// stringifier (each key escaped character by character, each number through its converter)
// out of ~100,000 for a whole report, where this writes the fixed keys as literals.
import type { TelemetryReply } from '../telemetry/protocol.js'

/** A number as JSON writes it: finite numbers print as String() does; others are null. */
const number = (value: number): string => (Number.isFinite(value) ? String(value) : 'null')

export function replyJson(reply: TelemetryReply): string {
  // The scope is client input (validated visible ASCII, which still allows `"` and `\`): escaped by JSON itself.
  let text = `{"v":${number(reply.v)},"scope":${JSON.stringify(reply.scope)},"activeClients":${number(reply.activeClients)},"totalAttempts":${number(reply.totalAttempts)},"throttledReports":${number(reply.throttledReports)},"windowMs":${number(reply.windowMs)}`
  if (reply.quotaPerSecond !== undefined) text += `,"quotaPerSecond":${number(reply.quotaPerSecond)}`
  if (reply.fairSharePerSecond !== undefined) text += `,"fairSharePerSecond":${number(reply.fairSharePerSecond)}`
  return `${text}}`
}
