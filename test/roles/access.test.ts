/**
 * The access-control engine on its own (no request, no store): what a set of roles grants.
 */
import { describe, expect, it } from '@jest/globals'
import { defineAccess } from 'portcullis'

const access = defineAccess({
  statements: { post: ['create', 'delete'], user: ['ban'] },
  roles: { editor: { post: ['create'] }, moderator: { user: ['ban'] } },
})

describe('access.can', () => {
  it('admin has every permission and user none, unless the definition says otherwise', () => {
    expect(access.can(['admin'], { post: ['create', 'delete'], user: ['ban'] })).toBe(true)
    expect(access.can(['user'], { post: ['create'] })).toBe(false)
    const custom = defineAccess({ statements: { post: ['create'] }, roles: { user: { post: ['create'] } } })
    expect(custom.can(['user'], { post: ['create'] })).toBe(true)
    expect(custom.roleNames).toEqual(['admin', 'user'])
  })

  it('grants what the roles grant together, each action by some role', () => {
    expect(access.can(['editor'], { post: ['create', 'delete'] })).toBe(false)
    expect(access.can(['editor', 'moderator'], { post: ['create'], user: ['ban'] })).toBe(true)
    expect(access.can(['moderator', 'editor'], { post: ['delete'] })).toBe(false)
  })

  it('an unknown role, no roles, or null grant nothing; an empty ask is granted to a known role only', () => {
    expect(access.can(['root'], {})).toBe(false)
    expect(access.can(['root', 'ghost'], { post: ['create'] })).toBe(false)
    expect(access.can([], {})).toBe(false)
    expect(access.can(null, { post: ['create'] })).toBe(false)
    expect(access.can(['user'], {})).toBe(true)
    expect(access.can(['root', 'user'], {})).toBe(true)
  })

  it('a resource inherited from Object.prototype is no statement', () => {
    expect(access.can(['admin'], { toString: ['call'] } as never)).toBe(false)
  })

  it('is frozen: a role cannot be given more once defined', () => {
    expect(Object.isFrozen(access)).toBe(true)
    expect(Object.isFrozen(access.roles.editor)).toBe(true)
    expect(() => (access.roles.editor.post as string[]).push('delete')).toThrow(TypeError)
    expect(access.can(['editor'], { post: ['delete'] })).toBe(false)
  })
})
