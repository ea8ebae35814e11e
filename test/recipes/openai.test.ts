import { describe } from 'vitest'
import { recipeChecks } from './recipe-checks.js'

describe('recipe: openai', () => recipeChecks('openai'))
