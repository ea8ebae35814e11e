// The example's service worker. Built twice (classic IIFE `sw.js`, module `sw.mjs`).
// The API origin comes from the script URL (`sw.js?api=http://127.0.0.1:8787`), so one
// build serves any quota server; only `/api/…` is paced (the page's `/__stats` polling
// for the chart must not draw on the limiter).
import { atb } from 'polite-fetch'
import { installPoliteFetch } from 'polite-fetch/sw'

const params = new URL(location.href).searchParams
const api = new URL(params.get('api') ?? 'http://127.0.0.1:8787').origin

installPoliteFetch({
  match: `${api}/api/`,
  // The default pacer, as a user would ship it: it learns the quota's pace from the API's
  // answers, so nothing here depends on how fast the demo's quota server runs.
  strategy: atb(),
  // Write pacer state often: the demo stops this worker on purpose and must resume paced.
  persistIntervalMs: 250,
  deadlineMs: 30_000,
})
