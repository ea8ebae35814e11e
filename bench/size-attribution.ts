// Which source module each byte of a minified bundle came from, read off its source map, and
// what each module (or group of modules) costs after brotli. A module's minified bytes are
// exact; its brotli cost is marginal: the compressed size of the whole bundle minus that of the
// bundle without the module's bytes. Marginal costs do not add up exactly to the total (brotli
// shares repeats across modules), but each says what removing that code would save. Below about
// 100 B a module's figure is within brotli's noise (a small module can even read negative); the
// parts (pacer, signal reader, …) are large enough to read as they are.

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const DIGIT = new Map([...BASE64].map((char, index) => [char, index]))

export interface SourceMap {
  sources: string[]
  mappings: string
}

/** For every UTF-16 unit of `code`, the index of its source in `map.sources` (-1: none). */
export function ownersOf(code: string, map: SourceMap): Int32Array {
  const owners = new Int32Array(code.length).fill(-1)
  const lines = code.split('\n')
  const mappingLines = map.mappings.split(';')
  let lineStart = 0
  let source = 0 // source indices are deltas across the whole map
  for (let line = 0; line < lines.length; line++) {
    const text = lines[line] ?? ''
    let column = 0
    const starts: Array<[column: number, source: number]> = []
    for (const segment of (mappingLines[line] ?? '').split(',')) {
      if (segment === '') continue
      const fields = decodeVlq(segment)
      column += fields[0] ?? 0
      if (fields.length > 1) source += fields[1] ?? 0
      starts.push([column, fields.length > 1 ? source : -1])
    }
    for (let index = 0; index < starts.length; index++) {
      const [from, owner] = starts[index] as [number, number]
      const to = index + 1 < starts.length ? (starts[index + 1] as [number, number])[0] : text.length
      owners.fill(owner, lineStart + from, lineStart + to)
    }
    lineStart += text.length + 1
  }
  return owners
}

function decodeVlq(segment: string): number[] {
  const values: number[] = []
  let value = 0
  let shift = 0
  for (const char of segment) {
    const digit = DIGIT.get(char)
    if (digit === undefined) throw new Error(`bad source map segment ${segment}`)
    value += (digit & 31) * 2 ** shift
    if (digit & 32) {
      shift += 5
      continue
    }
    values.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2)
    value = 0
    shift = 0
  }
  return values
}

export interface Share {
  name: string
  minifiedBytes: number
  /** Brotli of the bundle minus brotli of the bundle without this share's bytes. */
  brotliBytes: number
}

/** Groups the bundle's bytes by `nameOf(source)` and prices each group (largest first). */
export function shares(
  code: string,
  owners: Int32Array,
  sources: string[],
  nameOf: (source: string | undefined) => string,
  brotli: (text: string) => number,
): Share[] {
  const total = brotli(code)
  const groupOf = new Map<number, string>()
  const name = (owner: number): string => {
    let group = groupOf.get(owner)
    if (group === undefined) groupOf.set(owner, (group = nameOf(owner < 0 ? undefined : sources[owner])))
    return group
  }
  const names = new Set<string>()
  for (let owner = -1; owner < sources.length; owner++) names.add(name(owner))
  const result: Share[] = []
  for (const group of names) {
    let without = ''
    let minifiedBytes = 0
    let runStart = 0
    for (let index = 0; index <= code.length; index++) {
      const inGroup = index < code.length && name(owners[index] as number) === group
      if (inGroup) minifiedBytes++
      if (inGroup || index === code.length) {
        without += code.slice(runStart, index)
        runStart = index + 1
      }
    }
    if (minifiedBytes > 0) result.push({ name: group, minifiedBytes, brotliBytes: total - brotli(without) })
  }
  return result.sort((a, b) => b.minifiedBytes - a.minifiedBytes)
}
