import { describe } from 'vitest'
import { recipeChecks } from './recipe-checks.js'

describe('recipe: anthropic', () => recipeChecks('anthropic'))
