// A strategy option that makes no sense is the caller's mistake: it throws, naming the option,
// in the words `createClient` uses, instead of being replaced by the default without a word.

export function optionError(strategy: string, name: string, expected: string, value: unknown): TypeError {
  const type = value === null ? 'null' : typeof value
  return new TypeError(`polite-fetch: ${strategy} option \`${name}\` must be ${expected}; received ${String(value)} (${type})`)
}

/** Throws unless every key of `options` is one of `known` (a misspelt option would be ignored). */
export function checkKnownOptions(strategy: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw optionError(strategy, key, `one of ${known.join(', ')}`, 'an unknown option')
  }
}
