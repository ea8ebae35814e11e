// ky and axios (its fetch adapter) against a mock that sends the IETF RateLimit fields.
import { describe } from 'vitest'
import { recipeChecks } from './recipe-checks.js'

describe('recipe: ky', () => recipeChecks('ky'))
describe('recipe: axios (fetch adapter)', () => recipeChecks('axios'))
