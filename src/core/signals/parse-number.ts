// Plain numbers in header values. Written as a character loop rather than
// Number()/parseFloat, because those accept "1e3", "0x10", "Infinity", " 12 "
// and partial prefixes ("12abc"), none of which a server means as a count.

const MAX_NUMBER_LENGTH = 32
/** Digits, optionally one dot with digits on both sides. */
const NON_NEGATIVE_DECIMAL = /^\d+(?:\.\d+)?$/

/** "120", "1.5", "0.25" → number; a sign, exponent, empty text or junk → undefined. */
export function parseNonNegativeDecimal(text: string): number | undefined {
  const value = text.trim()
  return value.length <= MAX_NUMBER_LENGTH && NON_NEGATIVE_DECIMAL.test(value) ? Number(value) : undefined
}

/**
 * The first member of a field that a proxy may have duplicated and the Headers
 * API joined with ", " ("5, 5"); for plain-number fields the first one counts.
 */
export function firstMember(value: string): string {
  const comma = value.indexOf(',')
  return comma === -1 ? value : value.slice(0, comma)
}

/** A count header ("4999"); a duplicated field reads its first member. */
export function parseCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  return parseNonNegativeDecimal(firstMember(value))
}
