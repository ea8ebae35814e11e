import { describe } from 'vitest'
import { recipeChecks } from './recipe-checks.js'

// With the IETF RateLimit fields, ATB sends the nine waiting retries together when the
// window resets: 6 more 429s (the pacer's work, branch i15-pacer).
const secondBurst = 'IETF fields: the pacer spends the reset on all nine waiting retries'
describe('recipe: ky', () => recipeChecks('ky', { secondBurst }))
describe('recipe: axios (fetch adapter)', () => recipeChecks('axios', { secondBurst }))
