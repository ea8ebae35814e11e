// A page's request body, as the worker hands it to each attempt. Read into a Blob, which
// the browser keeps (on disk when large), not into the worker's heap, so every body is
// replayable whatever its size. Not a stream: Chromium sends a streamed upload only over
// HTTP/2 or later and fails it over HTTP/1.1, where the page's own fetch of the same body
// would have worked.

/** The body of `request` (which has one) as a Blob; rejects with the abort reason if `signal` (the page's) aborts first. */
export function requestBlob(request: Request, signal: AbortSignal = request.signal): Promise<Blob> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<Blob>((resolve, reject) => {
    // A page streaming its body may never end it: its abort, where the browser reports it, settles the read.
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    request.blob().then(
      (blob) => {
        signal.removeEventListener('abort', onAbort)
        resolve(blob)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
