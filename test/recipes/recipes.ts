// The README's "Works with" recipes, as code: each builds the vendor's real client on a
// polite-fetch client, exactly as the snippet there shows, plus one call in that SDK's
// terms. Tests (recipes.test.ts) and the figures script (bench/recipes.ts) use these,
// so what the README shows is what is proven.
import Anthropic from '@anthropic-ai/sdk'
import { throttling } from '@octokit/plugin-throttling'
import { Octokit } from '@octokit/rest'
import axios from 'axios'
import ky from 'ky'
import OpenAI from 'openai'
import { type Client, createClient } from '../../src/client/create-client.js'
import type { ClientOptions } from '../../src/client/options.js'
import type { Vendor } from './vendor-mock.js'

export type RecipeName = 'openai' | 'anthropic' | 'octokit' | 'octokit+throttling' | 'ky' | 'axios'

export interface Recipe {
  name: RecipeName
  vendor: Vendor
  client: Client
  /** One non-streaming POST (or GET for Octokit's read) carrying `id`; resolves with what came back. */
  call(id: string): Promise<string>
  /** One streaming call (the LLM SDKs only); resolves with the text streamed. */
  stream?(id: string): Promise<string>
  /** The error class the SDK raises for a 429 it gives up on. */
  isRateLimitError(error: unknown): boolean
}

export function makeRecipe(name: RecipeName, baseUrl: string, options: ClientOptions = {}): Recipe {
  switch (name) {
    case 'openai': {
      // README: OpenAI
      const polite = createClient({ giveUp: 'response', ...options })
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${baseUrl}/v1`, fetch: polite.fetch })
      return {
        name,
        vendor: 'openai',
        client: polite,
        call: async (id) => {
          const done = await openai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: id }] })
          return done.choices[0]?.message.content ?? ''
        },
        stream: async (id) => {
          const stream = await openai.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: id }] })
          let text = ''
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
          return text
        },
        isRateLimitError: (error) => error instanceof OpenAI.RateLimitError,
      }
    }
    case 'anthropic': {
      // README: Anthropic
      const polite = createClient({ giveUp: 'response', ...options })
      const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: baseUrl, fetch: polite.fetch })
      return {
        name,
        vendor: 'anthropic',
        client: polite,
        call: async (id) => {
          const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: id }] })
          const block = message.content[0]
          return block?.type === 'text' ? block.text : ''
        },
        stream: async (id) => {
          const stream = await anthropic.messages.create({ model: 'claude-test', max_tokens: 16, stream: true, messages: [{ role: 'user', content: id }] })
          let text = ''
          for await (const event of stream) {
            if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text
          }
          return text
        },
        isRateLimitError: (error) => error instanceof Anthropic.RateLimitError,
      }
    }
    case 'octokit':
    case 'octokit+throttling': {
      // README: Octokit (no throttling plugin needed)
      const polite = createClient({ giveUp: 'response', ...options })
      const octokit =
        name === 'octokit'
          ? new Octokit({ baseUrl, request: { fetch: polite.fetch } })
          : // The plugin on top does no harm: polite-fetch hands it no 429 to act on.
            new (Octokit.plugin(throttling))({
              baseUrl,
              request: { fetch: polite.fetch },
              throttle: { onRateLimit: () => true, onSecondaryRateLimit: () => true },
            })
      return {
        name,
        vendor: 'github',
        client: polite,
        // The plugin spaces writes itself (1 s apart, 3 s for content-creating ones): a GET shows it is not needed.
        call: async (id) => {
          if (name === 'octokit+throttling') return (await octokit.rest.repos.get({ owner: 'octo', repo: id })).data.name
          const { data } = await octokit.rest.issues.create({ owner: 'octo', repo: 'polite', title: id, body: `echo ${id}` })
          return (data as unknown as { name: string }).name
        },
        isRateLimitError: (error) => (error as { name?: string; status?: number }).name === 'HttpError' && (error as { status?: number }).status === 429,
      }
    }
    case 'ky': {
      // README: ky — polite-fetch retries and times the call, so ky does neither.
      const polite = createClient({ giveUp: 'response', ...options })
      const api = ky.create({ prefixUrl: baseUrl, fetch: polite.fetch, retry: 0, timeout: false })
      return {
        name,
        vendor: 'ietf',
        client: polite,
        call: async (id) => (await api.post('items', { json: { echo: id } }).json<{ echo: string }>()).echo,
        isRateLimitError: (error) => (error as { name?: string; response?: Response }).name === 'HTTPError' && (error as { response: Response }).response.status === 429,
      }
    }
    case 'axios': {
      // README: axios — its fetch adapter, with polite-fetch as the fetch.
      const polite = createClient({ giveUp: 'response', ...options })
      const api = axios.create({ baseURL: baseUrl, adapter: 'fetch', env: { fetch: polite.fetch } })
      return {
        name,
        vendor: 'ietf',
        client: polite,
        call: async (id) => (await api.post<{ echo: string }>('/items', { echo: id })).data.echo,
        isRateLimitError: (error) => axios.isAxiosError(error) && error.response?.status === 429,
      }
    }
  }
}

export const RECIPES: RecipeName[] = ['openai', 'anthropic', 'octokit', 'octokit+throttling', 'ky', 'axios']
