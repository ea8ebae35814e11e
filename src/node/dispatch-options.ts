// The dispatch options a paced dispatch hands down, in an object of a shape V8 shares.
//
// undici's `request`, `stream` and `pipeline` build every dispatch's options with an object
// spread (`{ ...opts, origin, path, method }`), and Node 20's V8 gives each object made that
// way a hidden class (map) of its own. Every property read of such an object misses its
// inline cache and takes V8's runtime path: undici's `Request` constructor reads some fifteen
// options, most of them absent, and each miss costs about 0.1–0.2 µs, some 2.5 µs per request
// on the 2-core development machine (`perf`, see docs/node.md). A copy made by adding the
// same keys in the same order to an empty object follows V8's shared transition tree, so
// every read below us (our own and undici's) hits its cache. `Object.assign` copies exactly
// what the spread copied: own enumerable properties, values read once.
import type { Dispatcher } from 'undici'

/**
 * `opts`, or a copy of it whose shape V8 shares with every other copy of the same keys. Only
 * plain objects are copied: an instance of a class, or an object with an own `__proto__` key
 * (which `Object.assign` would turn into a prototype), is handed down as it is.
 */
export function withSharedShape(opts: Dispatcher.DispatchOptions): Dispatcher.DispatchOptions {
  if (Object.getPrototypeOf(opts) !== Object.prototype || Object.hasOwn(opts, '__proto__')) return opts
  return Object.assign({}, opts)
}
