// Which requests the worker paces. Everything else passes through untouched: the
// worker must never slow a page's own navigation, scripts or images by accident.

/** Decide for one request; a predicate that throws counts as "no match". */
export type RequestPredicate = (request: Request) => boolean

/**
 * One rule:
 * - `'https://api.example.com'` — every request to that origin;
 * - `'https://api.example.com/v1/'` — that origin, paths starting with `/v1/`;
 * - `'/api/'` — the worker's own origin, paths starting with `/api/`;
 * - a `RegExp` tested against the full URL;
 * - `{ origin, pathPrefix }` — both optional, all given must hold;
 * - a predicate on the `Request`.
 */
export type MatchRule = string | RegExp | RequestPredicate | { origin?: string; pathPrefix?: string }

export type Match = MatchRule | readonly MatchRule[]

interface UrlRule {
  origin: string
  pathPrefix: string
}

function urlRule(rule: string, workerOrigin: string): UrlRule {
  if (rule.startsWith('/')) return { origin: workerOrigin, pathPrefix: rule }
  let url: URL
  try {
    url = new URL(rule)
  } catch {
    throw new TypeError(`polite-fetch: match rule '${rule}' is neither an absolute URL nor a path starting with '/'`)
  }
  return { origin: url.origin, pathPrefix: url.pathname }
}

function objectRule(rule: { origin?: string; pathPrefix?: string }): UrlRule {
  // Normalise the origin the way URL does (lower-case host, default port dropped).
  const origin = rule.origin === undefined ? '' : urlRule(rule.origin, '').origin
  return { origin, pathPrefix: rule.pathPrefix ?? '/' }
}

/**
 * Compile `match` into one predicate. Invalid rules throw here, at install time, where
 * a configuration mistake belongs; the compiled predicate itself never throws.
 */
export function compileMatch(
  match: Match,
  workerOrigin: string,
  onError: (error: unknown) => void = () => {},
): RequestPredicate {
  const rules = (Array.isArray(match) ? match : [match]) as readonly MatchRule[]
  const tests = rules.map((rule): RequestPredicate => {
    if (typeof rule === 'function') {
      return (request) => {
        try {
          return rule(request) === true
        } catch (error) {
          onError(error)
          return false
        }
      }
    }
    if (rule instanceof RegExp) {
      // A copy, read from index 0 every time: a `g` or `y` RegExp's test() resumes at its
      // lastIndex, so the same URL would match and not match in turn.
      const pattern = new RegExp(rule)
      return (request) => {
        pattern.lastIndex = 0
        return pattern.test(request.url)
      }
    }
    const { origin, pathPrefix } = typeof rule === 'string' ? urlRule(rule, workerOrigin) : objectRule(rule)
    return (request) => {
      let url: URL
      try {
        url = new URL(request.url)
      } catch {
        return false
      }
      return (origin === '' || url.origin === origin) && url.pathname.startsWith(pathPrefix)
    }
  })
  return (request) => tests.some((test) => test(request))
}

/**
 * Requests the worker must leave alone whatever `match` says:
 * - navigations: pacing a page load would freeze the tab, and a 503 from us would
 *   replace the whole document;
 * - `no-cors` requests: their responses are opaque, so the status that drives the
 *   pacer cannot be read and the response cannot be rebuilt;
 * - `only-if-cached` outside same-origin mode, which `fetch` refuses from a worker.
 */
export function mustPassThrough(request: Request): boolean {
  if (request.mode === 'navigate' || request.mode === 'no-cors') return true
  return request.cache === 'only-if-cached' && request.mode !== 'same-origin'
}
