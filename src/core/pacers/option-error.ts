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
export function checkKnownOptions(owner: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const near = known.find((name) => closeTo(key.toLowerCase(), name.toLowerCase()))
    const hint = near === undefined ? '' : `; did you mean \`${near}\`?`
    throw new TypeError(`polite-fetch: ${owner} has no option \`${key}\`${hint} (its options: ${known.join(', ')})`)
  }
}

/** Within two edits (insert, delete, replace, or swap two neighbours): a typo, not another name. */
function closeTo(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false
  // Optimal string alignment distance, two rows back for the swap.
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + same)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      row.push(d)
    }
    before = previous
    previous = row
  }
  return previous[b.length]! <= 2
}
