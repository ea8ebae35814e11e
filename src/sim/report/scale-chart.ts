// Small multiples of lines against the time scale k (log axis): one panel per refill ×
// feedback, one line per strategy. Hand-written SVG like svg-charts.ts, no dependency.
import { escapeXml } from './svg-charts.js'

export interface ScaleSeries {
  label: string
  points: ReadonlyArray<{ k: number; value: number }>
}

export interface ScalePanel {
  title: string
  series: readonly ScaleSeries[]
}

export interface ScaleChartOptions {
  title: string
  yLabel: string
  /** Log y axis; values below `floor` are drawn at it (a log axis has no 0). */
  logY?: { floor: number }
  /** A dashed reference line across every panel (e.g. 1 = the oracle). */
  reference?: { value: number; label: string }
  columns?: number
}

const PALETTE = ['#7f7f7f', '#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd']
const FONT = 'font-family="system-ui, sans-serif"'
const PANEL_W = 260
const PANEL_H = 190
const GAP = 36

const label = (v: number) => (v >= 1000 ? `${v / 1000}k` : v >= 1 ? String(Number(v.toPrecision(3))) : String(Number(v.toPrecision(2))))

export function scaleChartSvg(panels: readonly ScalePanel[], options: ScaleChartOptions): string {
  const columns = options.columns ?? 3
  const rows = Math.ceil(panels.length / columns)
  const m = { left: 70, top: 48, bottom: 60 }
  const legendW = 170
  const width = m.left + columns * (PANEL_W + GAP) + legendW
  const height = m.top + rows * (PANEL_H + GAP + 14) + m.bottom
  const all = panels.flatMap((p) => p.series.flatMap((s) => s.points))
  const ks = [...new Set(all.map((p) => p.k))].sort((a, b) => a - b)
  const kMin = ks[0] ?? 1
  const kMax = ks[ks.length - 1] ?? 1
  const lx = (k: number) => Math.log10(k)
  const span = lx(kMax) - lx(kMin) || 1
  const floor = options.logY?.floor ?? 0
  const yValue = (v: number) => (options.logY ? Math.log10(Math.max(v, floor)) : v)
  const values = all.map((p) => p.value).filter(Number.isFinite)
  if (options.reference) values.push(options.reference.value)
  const yTicks = options.logY ? logTicks(floor, Math.max(...values, floor * 10)) : linearTicks(Math.min(...values, 1), Math.max(...values, 1))
  const yLo = yValue(yTicks[0]!)
  const yHi = yValue(yTicks[yTicks.length - 1]!)
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="11">`)
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`)
  out.push(`<text x="${m.left}" y="22" font-size="14" font-weight="600">${escapeXml(options.title)}</text>`)
  panels.forEach((panel, i) => {
    const x0 = m.left + (i % columns) * (PANEL_W + GAP)
    const y0 = m.top + Math.floor(i / columns) * (PANEL_H + GAP + 14) + 14
    const sx = (k: number) => x0 + ((lx(k) - lx(kMin)) / span) * PANEL_W
    const sy = (v: number) => y0 + PANEL_H - ((yValue(v) - yLo) / (yHi - yLo || 1)) * PANEL_H
    out.push(`<text x="${x0}" y="${y0 - 6}" font-size="12" font-weight="600">${escapeXml(panel.title)}</text>`)
    for (const t of yTicks) {
      out.push(`<line x1="${x0}" y1="${sy(t).toFixed(1)}" x2="${x0 + PANEL_W}" y2="${sy(t).toFixed(1)}" stroke="#eee"/>`)
      if (i % columns === 0) out.push(`<text x="${x0 - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${t === floor && options.logY ? `≤${label(t)}` : label(t)}</text>`)
    }
    for (const k of ks) {
      out.push(`<line x1="${sx(k).toFixed(1)}" y1="${y0}" x2="${sx(k).toFixed(1)}" y2="${y0 + PANEL_H}" stroke="#eee"/>`)
      out.push(`<text x="${sx(k).toFixed(1)}" y="${y0 + PANEL_H + 14}" text-anchor="middle">${label(k)}</text>`)
    }
    out.push(`<rect x="${x0}" y="${y0}" width="${PANEL_W}" height="${PANEL_H}" fill="none" stroke="#999"/>`)
    if (options.reference) {
      const ry = sy(options.reference.value).toFixed(1)
      out.push(`<line x1="${x0}" y1="${ry}" x2="${x0 + PANEL_W}" y2="${ry}" stroke="#333" stroke-dasharray="4 3"/>`)
    }
    panel.series.forEach((series, s) => {
      const color = PALETTE[s % PALETTE.length]!
      const pts = series.points.filter((p) => Number.isFinite(p.value)).map((p) => `${sx(p.k).toFixed(1)},${sy(p.value).toFixed(1)}`)
      if (pts.length > 1) out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`)
      for (const p of series.points) {
        if (!Number.isFinite(p.value)) continue
        out.push(`<circle cx="${sx(p.k).toFixed(1)}" cy="${sy(p.value).toFixed(1)}" r="3" fill="${color}"><title>${escapeXml(`${series.label}, k = ${p.k}: ${Number(p.value.toPrecision(3))}`)}</title></circle>`)
      }
    })
  })
  const legendX = m.left + columns * (PANEL_W + GAP)
  const names = panels[0]?.series.map((s) => s.label) ?? []
  names.forEach((name, s) => {
    const ly = m.top + 20 + s * 18
    out.push(`<line x1="${legendX}" y1="${ly}" x2="${legendX + 18}" y2="${ly}" stroke="${PALETTE[s % PALETTE.length]}" stroke-width="2"/>`)
    out.push(`<text x="${legendX + 24}" y="${ly + 4}">${escapeXml(name)}</text>`)
  })
  if (options.reference) {
    const ly = m.top + 20 + names.length * 18
    out.push(`<line x1="${legendX}" y1="${ly}" x2="${legendX + 18}" y2="${ly}" stroke="#333" stroke-dasharray="4 3"/>`)
    out.push(`<text x="${legendX + 24}" y="${ly + 4}">${escapeXml(options.reference.label)}</text>`)
  }
  out.push(`<text x="${m.left + (columns * (PANEL_W + GAP) - GAP) / 2}" y="${height - 16}" text-anchor="middle">time scale k (log): the quota refills k× slower, every time is k× longer</text>`)
  out.push(`<text x="16" y="${height / 2}" text-anchor="middle" transform="rotate(-90 16 ${height / 2})">${escapeXml(options.yLabel)}</text>`)
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** Decades from the floor's up to the one covering `max`. */
function logTicks(floor: number, max: number): number[] {
  const ticks: number[] = []
  for (let e = Math.floor(Math.log10(floor)); e <= Math.ceil(Math.log10(max)); e++) ticks.push(10 ** e)
  return ticks
}

/** Steps of 0.1, 0.25, 0.5 or 1 from below `min` to above `max`. */
function linearTicks(min: number, max: number): number[] {
  const range = max - min
  const step = [0.1, 0.25, 0.5, 1, 2].find((s) => range / s <= 6) ?? 5
  const lo = Math.floor(min / step) * step
  const ticks: number[] = []
  for (let v = lo; v <= max + step - 1e-9; v += step) ticks.push(Number(v.toFixed(4)))
  return ticks
}
