/** GET /providers: the configured providers, as Auth.js clients list them. */
import { authUrl, type Action } from './context.js'

export const providers: Action = async (ctx) => {
  const json = Object.fromEntries(
    ctx.config.providers.map(({ id, name, type }) => [
      id,
      { id, name, type, signinUrl: authUrl(ctx, `/signin/${id}`), callbackUrl: authUrl(ctx, `/callback/${id}`) },
    ]),
  )
  return { json }
}
