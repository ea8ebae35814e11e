// Where readSignals gets header values from. A `Headers` fits, and so does any
// object with a case-insensitive `get` (undici's, a shim over Node's
// IncomingHttpHeaders, a test double).

export interface HeaderSource {
  get(name: string): string | null
}

/**
 * Fields longer than this are ignored: every legitimate rate-limit field is far
 * shorter, and a hostile multi-kilobyte value must not cost a parse per response.
 */
export const MAX_FIELD_LENGTH = 4096

/**
 * A header's value, or undefined when it is absent, not a string (a sloppy
 * HeaderSource) or over-long. Names passed here are always lower case.
 */
export function readField(headers: HeaderSource, name: string): string | undefined {
  const value: unknown = headers.get(name)
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_FIELD_LENGTH) return undefined
  return value
}
