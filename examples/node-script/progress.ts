// Progress on stderr: a redrawn bar when stderr is a terminal, a plain line every
// 10% otherwise (CI logs, pipes), so stdout stays clean for the summary.
export interface Progress {
  tick(): void
  done(): void
}

export function progress(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  let count = 0
  let lastDecile = -1
  const width = 30
  const draw = (): void => {
    if (stream.isTTY) {
      const filled = total === 0 ? width : Math.round((count / total) * width)
      stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${count}/${total}`)
      return
    }
    const decile = total === 0 ? 10 : Math.floor((count / total) * 10)
    if (decile !== lastDecile) {
      lastDecile = decile
      stream.write(`${label}: ${count}/${total}\n`)
    }
  }
  draw()
  return {
    tick() {
      count++
      draw()
    },
    done() {
      if (stream.isTTY) stream.write('\n')
    },
  }
}
