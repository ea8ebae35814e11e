// The example's service worker. Built twice (classic IIFE `sw.js`, module `sw.mjs`).
// The API origin comes from the script URL (`sw.js?api=http://127.0.0.1:8787`), so one
// build serves any quota server; only `/api/…` is paced (the page's `/__stats` polling
// for the chart must not draw on the limiter).
import { atb } from 'polite-fetch'
import { installPoliteFetch } from 'polite-fetch/sw'

const params = new URL(location.href).searchParams
const api = new URL(params.get('api') ?? 'http://127.0.0.1:8787').origin
// The demo's quota server may run its clock k× faster (80/min becomes 80/min × k); ATB's
// time options are compressed by the same k, as the baseline's backoff is on the page.
const k = Math.max(1, Number(params.get('timeScale') ?? '1') || 1)

installPoliteFetch({
  match: `${api}/api/`,
  strategy: atb({
    minSpanMs: 10_000 / k,
    growthPerSecond: 0.02 * k,
    maxRetryBackoffMs: 60_000 / k,
    calmAfterMs: 600_000 / k,
  }),
  // Write pacer state often: the demo stops this worker on purpose and must resume paced.
  persistIntervalMs: 250,
  deadlineMs: 30_000,
})
