// The routes scenario in docs/results.md and on the terminal: one line per strategy,
// feedback, k and splitting, each route's 429s and completion ÷ its oracle, and the
// default's verdict against issue 15's line.
import { judgeRoutes, ROUTES_ORACLE_LIMIT, ROUTES_SHARE_OF_UB, type RoutesRow } from './routes-rows.js'
import { ROUTES_SCENARIO, routeName } from './routes-scenario.js'

export interface RoutesJson {
  scenario: string
  seeds: number
  firstSeed: number
  rows: RoutesRow[]
}

const num = (v: number | undefined, digits = 1) => (v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits))
const ROUTES = [routeName(ROUTES_SCENARIO.limited), routeName(ROUTES_SCENARIO.other)]

export function routesTableLines(rows: readonly RoutesRow[]): string[][] {
  return judgeRoutes(rows).map(({ row, allowedThrottled, misses, pass }) => [
    row.strategy,
    row.learnRouteSplits ? 'on' : 'off',
    row.feedback,
    String(row.scale),
    `${num(row.throttledMean)} ± ${num(row.throttledCi95)}`,
    num(allowedThrottled),
    ...ROUTES.flatMap((name) => [num(row.routes[name]?.throttledMean), num(row.routes[name]?.oracleRatio, 3)]),
    num(row.splitsMean, 2),
    String(row.incompleteRuns),
    pass === undefined ? '' : pass ? 'pass' : `miss (${misses.join(', ')})`,
  ])
}

export const ROUTES_TABLE_HEADER = [
  'strategy', 'splitting', 'feedback', 'k', '429s', 'allowed',
  ...ROUTES.flatMap((name) => [`${name} 429s`, `${name} ÷ oracle`]),
  'splits/run', 'incomplete', 'result',
]

export function renderRoutesSection(json: RoutesJson, command: string): string[] {
  const s = ROUTES_SCENARIO
  const out = [
    '## Routes: an endpoint limit under a global one',
    '',
    `${s.clients} clients send ${s.requests} Poisson requests over ${s.windowMs / 1000} s (1.5 × the 610 a global ${s.global.perMinute / 60}/s, ` +
      `burst ${s.global.capacity} token bucket admits); ${s.limitedShare * 100}% of them are \`${routeName(s.limited)}\`, limited to ` +
      `${s.limited.perSecond}/s (burst ${s.limited.capacity}) under the global limit, the rest \`${routeName(s.other)}\`. Each simulated client is ` +
      'the shipped `createClient` (its own lanes, the limiter\'s route splitter with `learnRouteSplits` on by default, no `scope` option), ' +
      'its `fetch` answered by the composite server model on one virtual clock (`src/sim/routes/`); every request is sent when it ' +
      'arrives. `deadlineMs` and `maxRetryAfterMs` (the user\'s bounds) are Infinity so that every request finishes. At scale k both ' +
      'limits refill k times slower and every time is k times longer. A route\'s oracle is `oracleSchedule` of the whole workload ' +
      'against the composite server, read at the route\'s last success. `splitting off` is the default with `learnRouteSplits: false`, ' +
      `the control. Seeds ${json.firstSeed}–${json.firstSeed + json.seeds - 1}.`,
    '',
    '```',
    command,
    '```',
    '',
    `Line for the default: 429s ≤ max(${ROUTES_SHARE_OF_UB * 100}% of UB's at k = 1, clients) and each route's completion ≤ ` +
      `${ROUTES_ORACLE_LIMIT} × its oracle, every run complete.`,
    '',
    `| ${ROUTES_TABLE_HEADER.join(' | ')} |`,
    `|${ROUTES_TABLE_HEADER.map(() => '---|').join('')}`,
    ...routesTableLines(json.rows).map((cells) => `| ${cells.map((c, i) => (i === cells.length - 1 && c.startsWith('pass') ? '**pass**' : c)).join(' | ')} |`),
  ]
  return out
}
