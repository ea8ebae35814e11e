// How a simulated client issues its requests.
// - `paper`: the paper's harness (algorithms.md §1.4): strictly sequential, one request
//   in flight, FIFO; request j+1 waits until j succeeded; unlimited retries.
// - `concurrent`: the SDK's reality: one lane per client, up to 8 attempts in flight,
//   FIFO with failed requests going back to the head of the lane (head-of-line retry:
//   nothing behind a waiting retry overtakes it).

export type ClientModel = 'paper' | 'concurrent'

export const CLIENT_MODELS: readonly ClientModel[] = ['paper', 'concurrent']

export function maxInFlight(model: ClientModel): number {
  return model === 'paper' ? 1 : 8
}

export function isClientModel(value: string): value is ClientModel {
  return (CLIENT_MODELS as readonly string[]).includes(value)
}
