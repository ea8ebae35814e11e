// The key every per-source bound uses. An IPv4 address is itself (IPv4-mapped IPv6 too);
// an IPv6 address is its /64, the block one subscriber usually gets, since a client that
// holds a /64 can pick a fresh address in it for every request.
export function sourceKey(address: string): string {
  if (!address.includes(':')) return address // IPv4: the common case, once per request
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const zone = address.indexOf('%')
  const bare = zone < 0 ? address : address.slice(0, zone)
  const [head = '', tail] = bare.toLowerCase().split('::')
  const front = head ? head.split(':') : []
  const back = tail ? tail.split(':') : []
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back]
  return `${groups.slice(0, 4).map((group) => Number.parseInt(group || '0', 16).toString(16)).join(':')}::/64`
}

/** The client's address as a trusted proxy appended it: the last `X-Forwarded-For` entry. */
export function forwardedFor(header: string | null): string | undefined {
  if (!header) return undefined
  const last = header.slice(header.lastIndexOf(',') + 1).trim()
  return last || undefined
}
