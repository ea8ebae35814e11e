import { describe, expect, it } from 'vitest'
import { ATB_DEFAULTS } from '../../../src/core/pacers/atb-options.js'
import { AATB_DEFAULTS } from '../../../src/core/pacers/aatb-options.js'
import { OPTIONS_TABLE_END, OPTIONS_TABLE_START, renderOptionsTable, withOptionsTable } from '../../../src/sim/report/options-table.js'

describe('the options table of docs/algorithms.md', () => {
  it('has one row per option of atb() and aatb(), with its default', () => {
    const table = renderOptionsTable()
    for (const name of Object.keys(ATB_DEFAULTS)) expect(table).toContain(`| \`atb\` | \`${name}\` |`)
    for (const name of Object.keys(AATB_DEFAULTS).filter((n) => n !== 'atb')) expect(table).toContain(`| \`aatb\` | \`${name}\` |`)
    expect(table).toContain('| `atb` | `calmAfterMs` | 600 000 | on the announced window |')
    expect(table).toContain('| `atb` | `maxRatePerSecond` | ∞ |')
  })

  it('replaces only the text between its markers', () => {
    const doc = `before\n${OPTIONS_TABLE_START}\nstale rows\n${OPTIONS_TABLE_END}\nafter\n`
    const out = withOptionsTable(doc)
    expect(out.startsWith(`before\n${OPTIONS_TABLE_START}\n| strategy |`)).toBe(true)
    expect(out.endsWith(`${OPTIONS_TABLE_END}\nafter\n`)).toBe(true)
    expect(out).not.toContain("stale rows")
    expect(withOptionsTable('no markers')).toBe('no markers')
  })
})
