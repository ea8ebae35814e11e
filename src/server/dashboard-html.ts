// The operator's page at GET /: one self-contained HTML document (inline style and script,
// no build step, no external asset). It holds no data itself: every 2 s it asks /v1/fleet
// (with the admin token from the URL fragment `#token=…` or the form, kept for the tab in
// sessionStorage) and draws each scope's active clients, attempts and 429s per second and
// fair share. The server's ring gives the last 30 s in 2 s buckets; the page keeps what it
// has seen for 5 minutes, so the charts cover "the last minutes" while it is open.
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>polite-fetch telemetry</title>
<style>
  :root { color-scheme: light dark; --fg: #1b1f24; --muted: #5b6570; --line: #d5dae0; --attempts: #2f6fdb; --throttled: #d6333a; --share: #218a4c; --clients: #8a5a00; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e6e9ed; --muted: #9aa4ae; --line: #39414a; } }
  body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: var(--fg); }
  header { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
  h1 { font-size: 18px; margin: 0; }
  #status { color: var(--muted); }
  form { display: none; gap: 6px; margin: 8px 0; }
  form.shown { display: flex; }
  table { border-collapse: collapse; width: 100%; margin-top: 10px; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
  th { font-weight: 600; color: var(--muted); font-size: 12px; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  td.scope { white-space: nowrap; }
  .tenant { color: var(--muted); font-size: 12px; }
  svg { display: block; }
  .legend span { margin-right: 10px; font-size: 12px; }
  .legend i { display: inline-block; width: 10px; height: 3px; margin-right: 4px; vertical-align: middle; }
  #empty { color: var(--muted); margin-top: 14px; }
</style>
</head>
<body>
<header>
  <h1>polite-fetch telemetry</h1>
  <span id="status">connecting…</span>
</header>
<form id="login"><input id="token" type="password" placeholder="admin token" autocomplete="off" size="32"><button>Show</button></form>
<div class="legend"><span><i style="background:var(--attempts)"></i>attempts/s</span><span><i style="background:var(--throttled)"></i>429s/s</span><span><i style="background:var(--clients)"></i>active clients</span><span><i style="background:var(--share)"></i>fair share/s (one idle client)</span> <span class="tenant">charts: up to the last 5 minutes while this page is open (the server keeps 30 s)</span></div>
<table>
  <thead><tr><th>scope</th><th>clients</th><th>sources</th><th>attempts/s</th><th>429s/s</th><th>fair share/s</th><th>quota/s</th><th>attempts and 429s</th><th>clients and fair share</th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<p id="empty" hidden>No scope has reported in the last minute.</p>
<script>
(() => {
  const HISTORY_MS = 300000
  const POLL_MS = 2000
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token')
  if (fromHash) { sessionStorage.setItem('pf-admin-token', fromHash); history.replaceState(null, '', location.pathname) }
  let token = sessionStorage.getItem('pf-admin-token') || ''
  const history_ = new Map()
  const $ = (id) => document.getElementById(id)
  const form = $('login')
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    token = $('token').value.trim()
    sessionStorage.setItem('pf-admin-token', token)
    poll()
  })
  const fmt = (n) => n === undefined ? '–' : n === 0 ? '0' : n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toPrecision(2)
  function spark(series, width, height) {
    const svgNs = 'http://www.w3.org/2000/svg'
    const svg = document.createElementNS(svgNs, 'svg')
    svg.setAttribute('width', width)
    svg.setAttribute('height', height)
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height)
    // The x axis spans what the page has seen (at most 5 minutes, at least 10 s), ending now.
    const end = Math.max(...series.flatMap(({ points }) => points.map(([t]) => t)), 0)
    const start = Math.min(...series.flatMap(({ points }) => points.map(([t]) => t)), end)
    const span = Math.max(10000, end - start)
    for (const { points, color, max } of series) {
      if (points.length === 0) continue
      const top = Math.max(max, 1e-9)
      const line = document.createElementNS(svgNs, 'polyline')
      line.setAttribute('fill', 'none')
      line.setAttribute('stroke', color)
      line.setAttribute('stroke-width', '1.5')
      line.setAttribute('points', points.map(([t, v]) =>
        (width - ((end - t) / span) * width).toFixed(1) + ',' + (height - 2 - (v / top) * (height - 4)).toFixed(1)).join(' '))
      svg.appendChild(line)
    }
    return svg
  }
  function remember(scope, now) {
    const key = scope.tenant + ' ' + scope.scope
    let h = history_.get(key)
    if (!h) history_.set(key, (h = { buckets: new Map(), samples: [] }))
    const newest = Math.floor(now / scope.bucketMs)
    scope.attempts.forEach((a, i) => h.buckets.set(newest - scope.attempts.length + 1 + i, [a, scope.throttledAttempts[i]]))
    h.samples.push([now, scope.activeClients, scope.fairSharePerSecond ?? 0])
    for (const index of h.buckets.keys()) if ((newest - index) * scope.bucketMs > HISTORY_MS) h.buckets.delete(index)
    while (h.samples.length && now - h.samples[0][0] > HISTORY_MS) h.samples.shift()
    return h
  }
  function cell(row, text, className) {
    const td = document.createElement('td')
    if (className) td.className = className
    if (text instanceof Node) td.appendChild(text); else td.textContent = text
    row.appendChild(td)
    return td
  }
  function render(data) {
    const rows = $('rows')
    rows.replaceChildren()
    $('empty').hidden = data.scopes.length > 0
    for (const scope of data.scopes) {
      const h = remember(scope, data.now)
      const seconds = scope.bucketMs / 1000
      // The current bucket is still filling: rates come from the completed ones.
      const done = scope.attempts.slice(0, -1)
      const doneThrottled = scope.throttledAttempts.slice(0, -1)
      const sum = (list) => list.reduce((a, b) => a + b, 0)
      const span = Math.max(1, done.length) * seconds
      const row = document.createElement('tr')
      row.dataset.scope = scope.scope
      const name = document.createElement('div')
      name.textContent = scope.scope
      const tenant = document.createElement('div')
      tenant.className = 'tenant'
      tenant.textContent = scope.tenant
      cell(row, name, 'scope').appendChild(tenant)
      cell(row, String(scope.activeClients), 'num clients')
      cell(row, String(scope.sources), 'num')
      cell(row, fmt(sum(done) / span), 'num attempts')
      cell(row, fmt(sum(doneThrottled) / span), 'num throttled')
      cell(row, fmt(scope.fairSharePerSecond), 'num share')
      cell(row, fmt(scope.quotaPerSecond), 'num')
      // The current bucket is still filling; it joins the chart once complete.
      const current = Math.floor(data.now / scope.bucketMs)
      const buckets = [...h.buckets.entries()].filter(([i]) => i < current).sort((a, b) => a[0] - b[0])
      const attempts = buckets.map(([i, [a]]) => [(i + 1) * scope.bucketMs, a / seconds])
      const throttled = buckets.map(([i, [, t]]) => [(i + 1) * scope.bucketMs, t / seconds])
      const peak = Math.max(0, ...attempts.map(([, v]) => v))
      cell(row, spark([{ points: attempts, color: 'var(--attempts)', max: peak }, { points: throttled, color: 'var(--throttled)', max: peak }], 180, 36))
      const clients = h.samples.map(([t, c]) => [t, c])
      const share = h.samples.map(([t, , s]) => [t, s])
      cell(row, spark([
        { points: clients, color: 'var(--clients)', max: Math.max(...clients.map(([, v]) => v)) },
        { points: share, color: 'var(--share)', max: Math.max(...share.map(([, v]) => v)) },
      ], 180, 36))
      rows.appendChild(row)
    }
  }
  async function poll() {
    try {
      const response = await fetch('/v1/fleet', { headers: token ? { authorization: 'Bearer ' + token } : {}, cache: 'no-store' })
      if (response.status === 401 || response.status === 403) {
        form.classList.add('shown')
        $('status').textContent = response.status === 401 ? 'admin token needed' : 'this endpoint has no admin token configured'
        return
      }
      if (!response.ok) throw new Error('HTTP ' + response.status)
      const data = await response.json()
      form.classList.remove('shown')
      render(data)
      $('status').textContent = 'live · ' + data.scopes.length + ' scope(s) · updated ' + new Date(data.now).toLocaleTimeString()
    } catch (error) {
      $('status').textContent = 'unreachable (' + error.message + '), retrying'
    }
  }
  poll()
  setInterval(poll, POLL_MS)
})()
</script>
</body>
</html>
`
