// Fetch's types, spelled so the published declarations compile in any TypeScript project:
// with the DOM lib, and without it (Node with @types/node, which declares Request,
// Response, Headers and RequestInit as globals but not RequestInfo or BodyInit).

/** What fetch takes as its first argument: the DOM's `RequestInfo | URL`. */
export type FetchInput = string | URL | Request

/** A request body: the DOM's `BodyInit`. */
export type FetchBody = NonNullable<RequestInit['body']>

/** The fetch the client calls through (the global one, or the one it was given). */
export type FetchFunction = (input: FetchInput, init?: RequestInit) => Promise<Response>

/** The part of a response the client itself reads; the caller gets the whole object back. */
export interface ResponseShape {
  readonly status: number
  readonly headers: { get(name: string): string | null }
}

/**
 * What `createClient({ fetch })` accepts: the global fetch, undici's own `fetch`, a polyfill,
 * a wrapper. Its parameters are loose on purpose: each of those ships its own copy of the
 * fetch types (undici 7's `RequestInit` is not the lib's, and its `Response` is not the lib's
 * `Response` without the DOM lib), so a strict signature would refuse fetches that work.
 * The client hands it what fetch takes and uses its result as a WHATWG Response.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type FetchImplementation = (input: any, init?: any) => Promise<ResponseShape>
