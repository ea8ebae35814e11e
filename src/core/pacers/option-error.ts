// A strategy option that makes no sense is the caller's mistake: it throws, naming the option,
// in the words `createClient` uses, instead of being replaced by the default without a word.

/** `polite-fetch: <what> must be <expected>; received <value> (<type>)`: the one wording of every option's error. */
export function mustBeError(what: string, expected: string, value: unknown): TypeError {
  const type = value === null ? 'null' : typeof value
  return new TypeError(`polite-fetch: ${what} must be ${expected}; received ${String(value)} (${type})`)
}

export function optionError(strategy: string, name: string, expected: string, value: unknown): TypeError {
  return mustBeError(`${strategy} option \`${name}\``, expected, value)
}

/** Throws unless every key of `options` is one of `known` (a misspelt option would be ignored). */
export function checkKnownOptions(strategy: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw optionError(strategy, key, `one of ${known.join(', ')}`, 'an unknown option')
  }
}
