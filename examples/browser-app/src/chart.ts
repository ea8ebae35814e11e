// A hand-written canvas chart: admitted (green) and throttled (red) requests per
// second as stacked bars, and the limiter's current rate as a blue line.

export interface ChartSeries {
  admitted: number[]
  throttled: number[]
  /** Allowed rate per second at each second; undefined while not pacing. */
  rate: (number | undefined)[]
}

const COLORS = { admitted: '#2e9d5b', throttled: '#d64545', rate: '#2f6fdb', grid: '#e3e6ea', text: '#5a6270' }

export function drawChart(canvas: HTMLCanvasElement, series: ChartSeries): void {
  const ctx = canvas.getContext('2d')
  if (!ctx) return
  const { width, height } = canvas
  const pad = { left: 40, right: 12, top: 12, bottom: 22 }
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const n = Math.max(series.admitted.length, 1)
  const rates = series.rate.filter((r): r is number => r !== undefined && Number.isFinite(r))
  const top = Math.max(5, ...series.admitted.map((a, i) => a + (series.throttled[i] ?? 0)), ...rates)
  const yOf = (value: number) => pad.top + plotH - (value / top) * plotH

  ctx.clearRect(0, 0, width, height)
  ctx.font = '11px system-ui, sans-serif'
  ctx.fillStyle = COLORS.text
  ctx.strokeStyle = COLORS.grid
  for (let i = 0; i <= 4; i++) {
    const value = (top * i) / 4
    const y = yOf(value)
    ctx.beginPath()
    ctx.moveTo(pad.left, y)
    ctx.lineTo(width - pad.right, y)
    ctx.stroke()
    ctx.fillText(value.toFixed(0), 4, y + 4)
  }
  ctx.fillText(`last ${n} s`, pad.left, height - 6)

  const barW = plotW / n
  for (let i = 0; i < n; i++) {
    const x = pad.left + i * barW + 1
    const admitted = series.admitted[i] ?? 0
    const throttled = series.throttled[i] ?? 0
    ctx.fillStyle = COLORS.admitted
    ctx.fillRect(x, yOf(admitted), Math.max(1, barW - 2), pad.top + plotH - yOf(admitted))
    ctx.fillStyle = COLORS.throttled
    ctx.fillRect(x, yOf(admitted + throttled), Math.max(1, barW - 2), yOf(admitted) - yOf(admitted + throttled))
  }

  ctx.strokeStyle = COLORS.rate
  ctx.lineWidth = 2
  ctx.beginPath()
  let drawing = false
  series.rate.forEach((rate, i) => {
    if (rate === undefined || !Number.isFinite(rate)) {
      drawing = false
      return
    }
    const x = pad.left + (i + 0.5) * barW
    if (drawing) ctx.lineTo(x, yOf(rate))
    else ctx.moveTo(x, yOf(rate))
    drawing = true
  })
  ctx.stroke()
  ctx.lineWidth = 1
}
