// A plain fixed-width table for terminals: numbers right-aligned, text left-aligned.
export function textTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? cell.toLocaleString('en-US') : cell)))
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)))
  const numeric = headers.map((_, i) => rows.every((row) => typeof row[i] === 'number'))
  const line = (row: string[]): string =>
    row.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n')
}
