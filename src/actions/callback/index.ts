/** GET, POST /callback/:provider: the end of a sign-in, by provider type. */
import { UnknownActionError } from '../../errors.js'
import { assertCsrf, type Action } from '../context.js'
import { findProvider } from '../signin.js'
import { signInWithCredentials } from './credentials.js'

export const callback =
  (providerId: string): Action =>
  async (ctx) => {
    const provider = findProvider(ctx, providerId)
    switch (provider.type) {
      case 'credentials':
        if (ctx.method !== 'POST') throw new UnknownActionError(`The ${provider.id} callback takes a POST of the sign-in form.`)
        assertCsrf(ctx)
        return signInWithCredentials(ctx, provider, ctx.body)
    }
  }
