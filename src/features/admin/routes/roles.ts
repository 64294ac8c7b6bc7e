/** POST /admin/user/roles `{ csrfToken, id, 'role:<name>': 'yes', … }`: the user's roles (`setUserRoles`); none ticked, the default ones. */
import type { Action } from '../../../actions/context.js'
import { createSetUserRoles } from '../api/set-user-roles.js'
import { userAction } from './shared.js'

export const setRolesAction: Action = async (ctx) =>
  userAction(
    ctx,
    'roles',
    async (api, call, userId, csrf) => {
      // One checkbox a role, each its own field: a form's repeated field would reach the router as its last value only.
      const roles = Object.keys(ctx.body).flatMap((key) => (key.startsWith('role:') && ctx.body[key] === 'yes' ? [key.slice('role:'.length)] : []))
      await createSetUserRoles(api)(call, userId, roles.length === 0 ? null : roles, csrf)
    },
    { notice: 'roles', invalid: 'Tick roles from the list.' },
  )
