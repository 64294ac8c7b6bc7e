/**
 * The features Portcullis is composed of, in the order the core asks them: the first that claims a
 * provider serves it (the password provider before plain credentials), and hooks run in this order.
 * Adding a feature is a folder under src/features/ and one line here (docs/development.md).
 */
import type { Feature } from '../composition/index.js'
import { apiKeysFeature } from './api-keys/feature.js'
import { accountFeature } from './account/feature.js'
import { adminFeature } from './admin/feature.js'
import { auditFeature } from './audit/feature.js'
import { authorizationServerFeature } from './authorization-server/feature.js'
import { credentialsFeature } from './credentials/feature.js'
import { emailFeature } from './email/feature.js'
import { emailCodeFeature } from './email-code/feature.js'
import { mcpFeature } from './mcp/feature.js'
import { oauthFeature } from './oauth/feature.js'
import { organizationsFeature } from './organizations/feature.js'
import { passkeyFeature } from './passkey/feature.js'
import { passwordFeature } from './password/feature.js'
import { pruneFeature } from './prune/feature.js'
import { rolesFeature } from './roles/feature.js'
import { sessionsFeature } from './sessions/feature.js'
import { ssoFeature } from './sso/feature.js'
import { twoFactorFeature } from './two-factor/feature.js'

export const FEATURES: readonly Feature[] = Object.freeze([
  oauthFeature,
  ssoFeature,
  emailCodeFeature,
  emailFeature,
  passwordFeature,
  credentialsFeature,
  passkeyFeature,
  sessionsFeature,
  pruneFeature,
  twoFactorFeature,
  apiKeysFeature,
  accountFeature,
  rolesFeature,
  organizationsFeature,
  adminFeature,
  authorizationServerFeature,
  mcpFeature,
  auditFeature,
])
