/**
 * Shared steps of the tests: the app rig with the demo user, and the browser's side of a
 * credentials sign-in (fetch the CSRF token, post the form) through a supertest agent that keeps
 * cookies like a browser.
 */
import express from 'express'
import request from 'supertest'
import type { PortcullisConfig } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { authApp, type AuthApp, type ExpressFactory } from './app-rig.js'

export const SECRET = 'a-test-secret-that-is-at-least-32-chars'

/** The demo user: `ada` / `lovelace`. */
export const credentialsProvider = Credentials({
  credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
  authorize: async ({ username, password }) =>
    username === 'ada' && password === 'lovelace' ? { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' } : null,
})

/** The app rig (support/app-rig.ts) with the test secret and the demo user's credentials provider. */
export function createTestApp(config: Partial<PortcullisConfig> = {}, createExpress: ExpressFactory = express): AuthApp {
  return authApp({ secret: SECRET, providers: [credentialsProvider], ...config }, createExpress)
}

/** GET /csrf: the token (the agent keeps the cookie). */
export async function fetchCsrfToken(agent: request.Agent): Promise<string> {
  const response = await agent.get('/api/auth/csrf').expect(200)
  return response.body.csrfToken as string
}

/** A complete credentials sign-in; resolves with the callback response (a 302). */
export async function signInWithPassword(agent: request.Agent, fields: Record<string, string> = { username: 'ada', password: 'lovelace' }) {
  const csrfToken = await fetchCsrfToken(agent)
  return agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, ...fields })
}

/** The `name=value` of a Set-Cookie header for `name`, if the response sets it. */
export function setCookie(response: { headers: Record<string, unknown> }, name: string): string | undefined {
  const cookies = (response.headers['set-cookie'] as string[] | undefined) ?? []
  return cookies.find((cookie) => cookie.startsWith(`${name}=`))
}
