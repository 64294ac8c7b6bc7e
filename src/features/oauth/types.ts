/** The OAuth wing's provider shapes, joined to `ProviderConfigs` (declaration merging). */
import type { OAuthConfig } from '../../providers/oauth.js'
import type { OIDCConfig } from '../../providers/oidc.js'

declare module '../../config/types.js' {
  interface ProviderConfigs {
    oauth: OAuthConfig
    oidc: OIDCConfig
  }
}
