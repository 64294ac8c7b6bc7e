/** The adapter with the SSO wing's methods, as the feature's check made sure it is. */
import type { ResolvedConfig } from '../../config/types.js'
import type { Adapter } from '../../types.js'
import type { SSO_ADAPTER_METHODS } from './config.js'

export type SsoAdapter = Required<Pick<Adapter, (typeof SSO_ADAPTER_METHODS)[number] | 'getMember' | 'addMember' | 'countMembers'>>

export function ssoAdapter(config: Pick<ResolvedConfig, 'adapter'>): SsoAdapter {
  return config.adapter as SsoAdapter
}
