// CORS for the browser example, which calls the quota server cross-origin. Rate-limit
// headers are not CORS-safelisted, so without `Expose-Headers` a page sees only the
// status: exactly the "CORS hides headers" case the SDK must survive, but not the one
// the demo wants to show by default.

export const EXPOSED_HEADERS = [
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Date',
].join(', ')

export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED_HEADERS,
}

export function preflightHeaders(requestedHeaders: string | undefined): Record<string, string> {
  return {
    ...CORS_HEADERS,
    'Access-Control-Allow-Methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
    // Echo what the page asked for (x-feedback, content-type, idempotency-key, …).
    'Access-Control-Allow-Headers': requestedHeaders ?? '*',
    'Access-Control-Max-Age': '600',
    'Content-Length': '0',
  }
}
