// Hand-written SVG charts (no dependency): 429s against completion time per strategy,
// and admitted/rejected attempts per second over one run.

export interface ScatterPoint {
  label: string
  /** Completion time, ms. */
  completionMs: number
  throttled: number
}

export interface ScatterOptions {
  title: string
  /** The oracle's completion time: drawn as the zero-429 bound. */
  oracleCompletionMs?: number
  width?: number
  height?: number
}

const PALETTE = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
const FONT = 'font-family="system-ui, sans-serif"'

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** Round numbers for axis ticks: 1, 2, 5 × 10^k. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0]
  const rough = max / count
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power
  const ticks: number[] = []
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)))
  return ticks
}

const fmt = (v: number) => (Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : String(Math.round(v * 10) / 10))

export function scatterSvg(points: readonly ScatterPoint[], options: ScatterOptions): string {
  const width = options.width ?? 640
  const height = options.height ?? 420
  const m = { left: 64, right: 180, top: 40, bottom: 48 }
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const seconds = points.map((p) => p.completionMs / 1000)
  const minX = Math.min(options.oracleCompletionMs ?? Infinity, ...points.map((p) => p.completionMs)) / 1000
  const xTicksAll = niceTicks(Math.max(...seconds, 1))
  const x0 = xTicksAll.filter((t) => t <= minX * 0.95).pop() ?? 0
  const xTicks = xTicksAll.filter((t) => t >= x0)
  const xMax = xTicks[xTicks.length - 1]!
  const yTicks = niceTicks(Math.max(...points.map((p) => p.throttled), 1))
  const yMax = yTicks[yTicks.length - 1]!
  const sx = (s: number) => m.left + ((s - x0) / (xMax - x0 || 1)) * plotW
  const sy = (v: number) => m.top + plotH - (v / yMax) * plotH
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`)
  out.push(`<text x="${m.left}" y="22" font-size="13" font-weight="600">${escapeXml(options.title)}</text>`)
  for (const t of xTicks) {
    out.push(`<line x1="${sx(t)}" y1="${m.top}" x2="${sx(t)}" y2="${m.top + plotH}" stroke="#eee"/>`)
    out.push(`<text x="${sx(t)}" y="${m.top + plotH + 16}" text-anchor="middle">${fmt(t)}</text>`)
  }
  for (const t of yTicks) {
    out.push(`<line x1="${m.left}" y1="${sy(t)}" x2="${m.left + plotW}" y2="${sy(t)}" stroke="#eee"/>`)
    out.push(`<text x="${m.left - 6}" y="${sy(t) + 4}" text-anchor="end">${fmt(t)}</text>`)
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`)
  out.push(`<text x="${m.left + plotW / 2}" y="${height - 10}" text-anchor="middle">completion time (s)</text>`)
  out.push(`<text x="16" y="${m.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${m.top + plotH / 2})">429 responses (mean)</text>`)
  if (options.oracleCompletionMs !== undefined) {
    const ox = sx(options.oracleCompletionMs / 1000)
    out.push(`<line x1="${ox}" y1="${m.top}" x2="${ox}" y2="${m.top + plotH}" stroke="#333" stroke-dasharray="4 3"/>`)
    out.push(`<text x="${ox + 4}" y="${m.top + 12}" fill="#333">oracle</text>`)
  }
  points.forEach((p, i) => {
    const color = PALETTE[i % PALETTE.length]!
    out.push(`<circle cx="${sx(p.completionMs / 1000).toFixed(1)}" cy="${sy(p.throttled).toFixed(1)}" r="5" fill="${color}"><title>${escapeXml(`${p.label}: ${fmt(p.throttled)} 429s, ${fmt(p.completionMs / 1000)} s`)}</title></circle>`)
    const ly = m.top + 10 + i * 18
    out.push(`<circle cx="${m.left + plotW + 16}" cy="${ly}" r="5" fill="${color}"/>`)
    out.push(`<text x="${m.left + plotW + 26}" y="${ly + 4}">${escapeXml(p.label)}</text>`)
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

export interface TimelineOptions {
  title: string
  width?: number
  height?: number
}

/** Admitted attempts per second above the axis, rejected (429) below it. */
export function timelineSvg(timeline: { admitted: readonly number[]; rejected: readonly number[] }, options: TimelineOptions): string {
  const width = options.width ?? 720
  const height = options.height ?? 300
  const m = { left: 48, right: 16, top: 40, bottom: 40 }
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const seconds = Math.max(timeline.admitted.length, timeline.rejected.length, 1)
  const up = niceTicks(Math.max(...timeline.admitted, 1), 3)
  const down = niceTicks(Math.max(...timeline.rejected, 1), 3)
  const upMax = up[up.length - 1]!
  const downMax = down[down.length - 1]!
  const axisY = m.top + (plotH * upMax) / (upMax + downMax)
  const unit = plotH / (upMax + downMax)
  const barW = plotW / seconds
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`)
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`)
  out.push(`<text x="${m.left}" y="22" font-size="13" font-weight="600">${escapeXml(options.title)}</text>`)
  for (const t of up) out.push(`<text x="${m.left - 6}" y="${axisY - t * unit + 4}" text-anchor="end">${t}</text>`)
  for (const t of down.slice(1)) out.push(`<text x="${m.left - 6}" y="${axisY + t * unit + 4}" text-anchor="end">${t}</text>`)
  const bars = (series: readonly number[], color: string, below: boolean) => {
    series.forEach((v, s) => {
      if (v <= 0) return
      const h = v * unit
      out.push(`<rect x="${(m.left + s * barW).toFixed(2)}" y="${(below ? axisY : axisY - h).toFixed(2)}" width="${Math.max(barW, 0.5).toFixed(2)}" height="${h.toFixed(2)}" fill="${color}"/>`)
    })
  }
  bars(timeline.admitted, '#2ca02c', false)
  bars(timeline.rejected, '#d62728', true)
  out.push(`<line x1="${m.left}" y1="${axisY}" x2="${m.left + plotW}" y2="${axisY}" stroke="#333"/>`)
  for (const t of niceTicks(seconds, 6)) {
    if (t > seconds) break
    out.push(`<text x="${m.left + t * barW}" y="${m.top + plotH + 16}" text-anchor="middle">${t}</text>`)
  }
  out.push(`<text x="${m.left + plotW / 2}" y="${height - 8}" text-anchor="middle">seconds since start — admitted (green, up) and 429 (red, down) per second</text>`)
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
