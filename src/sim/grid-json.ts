// The grid's JSON: the spec (names, not objects) and the rows. No timestamps or
// timings, so the same grid and seeds give byte-identical files.
import { specScales, type GridSpec } from './grid-spec.js'
import type { SimRow } from './sim-row.js'

export interface GridJson {
  grid: {
    name: string
    seeds: number
    firstSeed: number
    rttMs: number
    quota: GridSpec['quota']
    scales: number[]
    scenarios: Array<{ name: string; family: string; clients: number; requests: number; windowMs: number }>
    servers: string[]
    clientModels: string[]
    strategies: string[]
    feedbacks: string[]
  }
  rows: SimRow[]
}

export function gridJson(spec: GridSpec, rows: SimRow[]): GridJson {
  return {
    grid: {
      name: spec.name,
      seeds: spec.seeds,
      firstSeed: spec.firstSeed,
      rttMs: spec.rttMs,
      quota: spec.quota,
      scales: specScales(spec),
      scenarios: spec.scenarios.map(({ name, family, clients, requests, windowMs }) => ({ name, family, clients, requests, windowMs })),
      servers: [...spec.servers],
      clientModels: [...spec.clientModels],
      strategies: [...spec.strategies],
      feedbacks: [...spec.feedbacks],
    },
    rows,
  }
}

export function stringifyGrid(spec: GridSpec, rows: SimRow[]): string {
  return `${JSON.stringify(gridJson(spec, rows), null, 2)}\n`
}
