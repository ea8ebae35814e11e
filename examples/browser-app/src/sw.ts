// The example's service worker. Built twice (classic IIFE `sw.js`, module `sw.mjs`).
// The API origin comes from the script URL (`sw.js?api=http://127.0.0.1:8787`), so one
// build serves any quota server; only `/api/…` is paced (the page's `/__stats` polling
// for the chart must not draw on the limiter).
import { installPoliteFetch } from 'polite-fetch/sw'

const api = new URL(location.href).searchParams.get('api') ?? 'http://127.0.0.1:8787'

installPoliteFetch({
  match: `${new URL(api).origin}/api/`,
  // Write pacer state often: the demo stops this worker on purpose and must resume paced.
  persistIntervalMs: 250,
  deadlineMs: 30_000,
})
