import { describe } from 'vitest'
import { recipeChecks } from './recipe-checks.js'

describe('recipe: @octokit/rest', () => recipeChecks('octokit'))
describe('recipe: @octokit/rest with @octokit/plugin-throttling on top (not needed, does no harm)', () => recipeChecks('octokit+throttling'))
