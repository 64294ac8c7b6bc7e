/**
 * Discord's avatar URL rules, which the provider implements itself (the API gives only a hash):
 * custom avatars by hash, animated ones (`a_` prefix) as GIF, and the default avatar by the new
 * username system's rule or the legacy discriminator's.
 *
 * @see https://discord.com/developers/docs/reference#image-formatting-cdn-endpoints
 */
import { describe, expect, it } from '@jest/globals'
import Discord, { discordAvatarUrl } from 'portcullis/providers/discord'

describe('discordAvatarUrl', () => {
  it('serves a custom avatar by hash as PNG, an animated one (a_) as GIF', () => {
    expect(discordAvatarUrl({ id: '80351110224678912', avatar: '8342729096ea3675442027381ff50dfe' })).toBe(
      'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
    )
    expect(discordAvatarUrl({ id: '80351110224678912', avatar: 'a_1269e74af4df7417b13759eae50c83dc' })).toBe(
      'https://cdn.discordapp.com/avatars/80351110224678912/a_1269e74af4df7417b13759eae50c83dc.gif',
    )
  })

  it('computes the new-system default avatar from the exact snowflake, beyond 2^53', () => {
    // 2^60 + 2^22 - 1: as a JavaScript number it rounds up to 2^60 + 2^22, and the shift would be off by one.
    const id = (2n ** 60n + 2n ** 22n - 1n).toString()
    const exact = Number((BigInt(id) >> 22n) % 6n)
    expect(Math.floor(Number(id) / 2 ** 22) % 6).not.toBe(exact)
    expect(discordAvatarUrl({ id, avatar: null, discriminator: '0' })).toBe(`https://cdn.discordapp.com/embed/avatars/${exact}.png`)
    expect(discordAvatarUrl({ id: '1129480321367957614', avatar: null, discriminator: '0' })).toBe('https://cdn.discordapp.com/embed/avatars/1.png')
  })

  it('uses discriminator % 5 for legacy tags, and the new rule when there is no discriminator', () => {
    expect(discordAvatarUrl({ id: '80351110224678912', avatar: null, discriminator: '1337' })).toBe('https://cdn.discordapp.com/embed/avatars/2.png')
    expect(discordAvatarUrl({ id: '80351110224678912', avatar: null, discriminator: '0005' })).toBe('https://cdn.discordapp.com/embed/avatars/0.png')
    expect(discordAvatarUrl({ id: '80351110224678912', avatar: null })).toBe('https://cdn.discordapp.com/embed/avatars/5.png')
  })

  it('is what the provider maps the profile image to', async () => {
    const user = await Discord().profile!({ id: '80351110224678912', username: 'nelly', discriminator: '0', global_name: null, avatar: null, verified: true, email: 'n@example.com' }, {})
    expect(user.image).toBe('https://cdn.discordapp.com/embed/avatars/5.png')
  })
})
