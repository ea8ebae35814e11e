// A one-line progress bar on a TTY stream; silent elsewhere (CI logs, pipes).

export interface ProgressTarget {
  isTTY?: boolean
  columns?: number
  write(text: string): unknown
}

export function progressBar(target: ProgressTarget, label: string, clock: () => number = () => performance.now()): (done: number, total: number) => void {
  if (!target.isTTY) return () => {}
  const started = clock()
  let lastDrawn = -1
  return (done, total) => {
    const fraction = total > 0 ? done / total : 1
    const permille = Math.floor(fraction * 1000)
    if (permille === lastDrawn && done < total) return
    lastDrawn = permille
    const elapsedS = (clock() - started) / 1000
    const etaS = fraction > 0 ? (elapsedS / fraction) * (1 - fraction) : 0
    const width = Math.max(10, Math.min(40, (target.columns ?? 80) - label.length - 40))
    const filled = Math.round(fraction * width)
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`
    target.write(`\r${label} ${bar} ${(fraction * 100).toFixed(1).padStart(5)}% ${done}/${total} ${elapsedS.toFixed(0)}s eta ${etaS.toFixed(0)}s`)
    if (done >= total) target.write('\n')
  }
}
