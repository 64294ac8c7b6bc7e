/** The credentials wing's provider shape, joined to `ProviderConfigs` (declaration merging). */
import type { CredentialsProvider } from '../../providers/credentials.js'

declare module '../../config/types.js' {
  interface ProviderConfigs {
    credentials: CredentialsProvider
  }
}
