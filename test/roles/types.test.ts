/**
 * The permissions' types: a misspelt resource, action or role is a compile error wherever the
 * definition reaches (the roles, `access.can`, `hasPermission`, `requirePermission`, `setRoles`),
 * checked by `npm run typecheck`, which type-checks this file (each `@ts-expect-error` must find an
 * error, or the check fails). The runtime half checks that JavaScript callers are refused too.
 */
import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { defineAccess, type AccessControl, type PortcullisResult } from 'portcullis'
import { SECRET } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

const access = defineAccess({
  statements: { post: ['create', 'delete'], user: ['ban'] },
  roles: { editor: { post: ['create'] }, writer: { post: ['create', 'delete'] } },
})

/** Only compiled (they would throw): definitions whose roles name what the statements do not. */
export function misspeltDefinitions(): void {
  defineAccess({
    statements: { post: ['create'] },
    // @ts-expect-error: "publish" is no action of post
    roles: { writer: { post: ['publish'] } },
  })
  defineAccess({
    statements: { post: ['create'] },
    // @ts-expect-error: "comment" is no resource of the statements
    roles: { editor: { comment: ['create'] } },
  })
}

type Roles = (typeof access)['roleNames'][number]
const roles: Roles[] = ['admin', 'user', 'editor', 'writer']
// @ts-expect-error: no such role
const noRole: Roles = 'root'

access.can(['editor'], { post: ['create'] })
// @ts-expect-error: a misspelt action
access.can(['editor'], { post: ['delet'] })
// @ts-expect-error: a misspelt resource
access.can(['editor'], { posts: ['delete'] })

/** Only compiled: the functions' types, with the definition given as the option. */
export function typed(req: IncomingMessage): void {
  const portcullis = Portcullis({ secret: SECRET, providers: [], adapter: {}, roles: access })
  void portcullis.hasPermission(req, { post: ['delete'], user: ['ban'] })
  // @ts-expect-error: a misspelt action
  void portcullis.hasPermission(req, { post: ['remove'] })
  // @ts-expect-error: a misspelt resource
  void portcullis.hasPermission(req, { usr: ['ban'] })
  portcullis.requirePermission({ user: ['ban'] })
  // @ts-expect-error: a misspelt action
  portcullis.requirePermission({ user: ['bann'] })
  void portcullis.setRoles('u1', ['editor', 'admin'])
  // @ts-expect-error: no such role
  void portcullis.setRoles('u1', ['root'])
  // With { access, defaultRoles }: the same types, and the default roles are the definition's.
  const withOptions = Portcullis({ secret: SECRET, providers: [], roles: { access, defaultRoles: ['editor'] } })
  // @ts-expect-error: a misspelt action
  void withOptions.hasPermission(req, { post: ['creat'] })
  // @ts-expect-error: no such default role
  Portcullis({ secret: SECRET, providers: [], roles: { access, defaultRoles: ['root'] } })
  // Without the option (or a definition typed loosely), anything goes: the check refuses at run time.
  const loose: PortcullisResult<AccessControl> = Portcullis({ secret: SECRET, providers: [] })
  void loose.hasPermission(req, { anything: ['at-all'] })
  // The session's roles are typed on the session user.
  void portcullis.auth(req).then((session) => session?.user.roles?.includes('admin'))
  // With organizations' statements too: the checks take both sets, and the wing's own.
  const both = Portcullis({ secret: SECRET, providers: [], adapter: {}, roles: access, organizations: { statements: { project: ['create'] }, roles: { member: { project: ['create'] } } } })
  void both.hasPermission(req, { project: ['create'], post: ['delete'] })
  void both.hasPermission(req, { member: ['remove'] })
  both.requirePermission({ project: ['create'] })
  // @ts-expect-error: a misspelt action of an organization's statement
  both.requirePermission({ project: ['creat'] })
  // @ts-expect-error: a misspelt resource
  void both.hasPermission(req, { projects: ['create'] })
  Portcullis({
    secret: SECRET,
    providers: [],
    adapter: {},
    // @ts-expect-error: a role granting an action no statement has
    organizations: { statements: { project: ['create'] }, roles: { dev: { project: ['deploy'] } } },
  })
}

describe('the definition at run time', () => {
  it('refuses what the types refuse, for JavaScript callers', () => {
    expect(() => defineAccess({ statements: { post: ['create'] }, roles: { editor: { post: ['publish' as 'create'] } } })).toThrow('"publish" is no action of post (create)')
    expect(() => defineAccess({ statements: { post: ['create'] }, roles: { editor: { comment: ['x'] } as never } })).toThrow('"comment" is no resource of the statements (post)')
    expect(() => defineAccess({ statements: { post: ['create'] }, roles: { 'a,b': {} } })).toThrow('no comma or space')
    expect(roles).toHaveLength(4)
    expect(noRole).toBe('root')
  })

  it('refuses a misspelt permission in requirePermission at start-up, not as a 403 forever', () => {
    const good = defineAccess({ statements: { post: ['create'] } })
    const portcullis = Portcullis({ secret: SECRET, logger: recordingLogger(), providers: [], session: { strategy: 'jwt' }, adapter: { getUserRoles: async () => null, setUserRoles: async () => true }, roles: good })
    expect(() => portcullis.requirePermission({ post: ['creat' as 'create'] })).toThrow('"creat" is no action of post (create)')
  })
})
