/**
 * The filters the endpoints answer (RFC 7644 §3.4.2.2): one `<attribute> eq "<value>"` comparison,
 * which is what Okta and Microsoft Entra ID send to find a user or a group before they create it.
 * Attribute names and the operator are case-insensitive, and an attribute may be written with its
 * schema URN. Anything else (`and`, `or`, `co`, `sw`, `pr`, …) is refused as `invalidFilter`.
 */
import { ScimError, URN } from './errors.js'

/** One equality: the attribute lower case, without its schema URN; the value as sent. */
export interface ScimEquality {
  readonly attribute: string
  readonly value: string
}

const EQUALITY = /^\s*([A-Za-z][\w:.$-]*)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i

/** The filter, undefined when none was given. @throws ScimError 400 `invalidFilter` */
export function parseFilter(filter: string | null, attributes: readonly string[]): ScimEquality | undefined {
  if (filter === null || filter.trim() === '') return undefined
  const match = EQUALITY.exec(filter)
  const attribute = match && withoutSchema(match[1]!).toLowerCase()
  if (!match || !attributes.includes(attribute!)) {
    throw new ScimError(400, `Unsupported filter: this server answers one of ${attributes.map((name) => `${name} eq "…"`).join(', ')} (attribute names in any case).`, 'invalidFilter')
  }
  let value: string
  try {
    value = JSON.parse(`"${match[2]!}"`) as string
  } catch {
    throw new ScimError(400, 'The filter\'s value is not a valid JSON string.', 'invalidFilter')
  }
  return { attribute: attribute!, value }
}

/** An attribute path without the core schema's URN (`urn:…:User:userName` is `userName`). */
export function withoutSchema(path: string): string {
  for (const urn of [URN.user, URN.group]) if (path.toLowerCase().startsWith(`${urn.toLowerCase()}:`)) return path.slice(urn.length + 1)
  return path
}

/** RFC 7644 §3.4.2.4: `startIndex` (1-based, default 1) and `count` (default and most: `maxResults`). */
export function paging(query: URLSearchParams, maxResults: number): { startIndex: number; count: number } {
  const number = (name: string): number | undefined => {
    const given = query.get(name)
    if (given === null || given === '') return undefined
    const value = Number(given)
    if (!Number.isInteger(value)) throw new ScimError(400, `${name} must be a whole number.`, 'invalidValue')
    return value
  }
  return { startIndex: Math.max(1, number('startIndex') ?? 1), count: Math.min(maxResults, Math.max(0, number('count') ?? maxResults)) }
}

/** A ListResponse (RFC 7644 §3.4.2) of one page of `all`. */
export function listResponse<T>(all: readonly T[], page: { startIndex: number; count: number }, shape: (item: T) => Promise<unknown> | unknown): Promise<Record<string, unknown>> {
  return listOfPage(all.length, all.slice(page.startIndex - 1, page.startIndex - 1 + page.count), page.startIndex, shape)
}

async function listOfPage<T>(total: number, items: readonly T[], startIndex: number, shape: (item: T) => Promise<unknown> | unknown): Promise<Record<string, unknown>> {
  const Resources = []
  for (const item of items) Resources.push(await shape(item))
  return { schemas: [URN.listResponse], totalResults: total, startIndex, itemsPerPage: Resources.length, Resources }
}
