/** The e-mail wing's provider shape, joined to `ProviderConfigs` (declaration merging). */
import type { EmailConfig } from '../../providers/email.js'

declare module '../../config/types.js' {
  interface ProviderConfigs {
    email: EmailConfig
  }
}
