// Peer strategies for the simulator: other projects' retry and throttling algorithms,
// modelled with their own constants so the grid compares like with like.
export { awsAdaptive, AWS_ADAPTIVE_DEFAULTS, type AwsAdaptiveOptions } from './aws-adaptive.js'
export {
  sreThrottling,
  sreRejectionProbability,
  SRE_THROTTLING_DEFAULTS,
  type SreThrottlingOptions,
} from './sre-throttling.js'
export { kyBackoff, KY_BACKOFF_DEFAULTS, type KyBackoffOptions } from './ky-backoff.js'
