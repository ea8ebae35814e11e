import { describe, expect, it } from 'vitest'
import { HeaderSampling, MAX_SAMPLED_ORIGINS, READ_FIRST_RESPONSES, READ_ONE_IN } from '../../src/client/header-sampling.js'

const A = 'https://a.example'
const B = 'https://b.example'

/** Which of the next `count` 2xx responses of `origin` would be read (1-based positions). */
function readPositions(sampling: HeaderSampling, origin: string, count: number, status = 200): number[] {
  const read: number[] = []
  for (let i = 1; i <= count; i++) if (sampling.shouldRead(origin, status)) read.push(i)
  return read
}

describe('HeaderSampling', () => {
  it('reads the first responses of an origin, then one 2xx in READ_ONE_IN while it sends no field', () => {
    const sampling = new HeaderSampling()
    const read = readPositions(sampling, A, READ_FIRST_RESPONSES + 3 * READ_ONE_IN)
    const first = Array.from({ length: READ_FIRST_RESPONSES }, (_, i) => i + 1)
    const sampled = [1, 2, 3].map((k) => READ_FIRST_RESPONSES + k * READ_ONE_IN)
    expect(read).toEqual([...first, ...sampled])
  })

  it('always reads a response that is not a 2xx, and does not count it', () => {
    const sampling = new HeaderSampling()
    readPositions(sampling, A, READ_FIRST_RESPONSES + 1)
    for (const status of [429, 503, 403, 500, 304, 101]) expect(sampling.shouldRead(A, status)).toBe(true)
    // The 2xx count went on from where it was: the next read 2xx is the same as without them.
    expect(readPositions(sampling, A, READ_ONE_IN)).toEqual([READ_ONE_IN - 1])
  })

  it('reads every response of an origin once one carried a field', () => {
    const sampling = new HeaderSampling()
    readPositions(sampling, A, READ_FIRST_RESPONSES + 5)
    sampling.sawFields(A)
    expect(readPositions(sampling, A, 50)).toHaveLength(50)
    // Another origin keeps its own count.
    expect(readPositions(sampling, B, READ_FIRST_RESPONSES + READ_ONE_IN)).toHaveLength(READ_FIRST_RESPONSES + 1)
  })

  it('stays bounded however many origins it meets, starting over when full', () => {
    const sampling = new HeaderSampling()
    sampling.sawFields(A)
    for (let i = 0; i < MAX_SAMPLED_ORIGINS + 10; i++) sampling.shouldRead(`https://tenant-${i}.example`, 200)
    // A was forgotten with the rest: it is a new origin again, read in full for a while.
    expect(readPositions(sampling, A, READ_FIRST_RESPONSES)).toHaveLength(READ_FIRST_RESPONSES)
    expect(sampling.shouldRead(A, 200)).toBe(false)
  })
})
