/**
 * Parses the body of a POST to the router, so apps need no body parser in front of it: URL-encoded
 * forms and JSON, up to a size limit. A body the app's own parser already read is used as is.
 */
import { InvalidRequestError } from '../errors.js'
import type { NodeRequest } from './request.js'

/** Larger bodies are refused with 413: no auth form comes near it. */
export const BODY_LIMIT = 64 * 1024

/** The parsed body: string-keyed values, empty for a request without one. */
export type RequestBody = Record<string, unknown>

/**
 * Reads and parses the request body.
 *
 * @throws InvalidRequestError 413 when too large, 415 for other content types, 400 when malformed.
 */
export async function readBody(req: NodeRequest): Promise<RequestBody> {
  // Use what an app-level parser produced only if it really read the stream: Express 4's
  // body-parser sets `req.body = {}` without reading a body of a type it does not handle (a form
  // behind `express.json()`), and taking that `{}` would lose the form, CSRF token included.
  const consumed = (req as { _body?: unknown })._body === true || req.readableEnded
  if (consumed) {
    const parsed = req.body
    if (typeof parsed === 'string' || Buffer.isBuffer(parsed)) return parseBody(contentType(req), Buffer.from(parsed).toString('utf8'))
    return parsed && typeof parsed === 'object' ? (parsed as RequestBody) : {}
  }
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > BODY_LIMIT) {
    req.pause()
    throw tooLarge()
  }
  return parseBody(contentType(req), await readText(req))
}

function contentType(req: NodeRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
}

function parseBody(type: string, text: string): RequestBody {
  if (text.length === 0) return {}
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text))
  if (type === 'application/json' || type.endsWith('+json')) {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw new InvalidRequestError('The request body is not valid JSON.')
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InvalidRequestError('The JSON body must be an object.')
    return value as RequestBody
  }
  throw new InvalidRequestError('Unsupported body: send application/x-www-form-urlencoded or application/json.', 415)
}

function readText(req: NodeRequest): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const cleanup = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= BODY_LIMIT) return void chunks.push(chunk)
      // Stop reading without destroying the socket, so the 413 can still be sent (respond.ts
      // then closes the connection instead of reading the rest).
      cleanup()
      req.pause()
      reject(tooLarge())
    }
    const onEnd = (): void => {
      cleanup()
      resolve(Buffer.concat(chunks).toString('utf8'))
    }
    const onError = (error: Error): void => {
      cleanup()
      reject(new InvalidRequestError(`The request body could not be read: ${error.message}`))
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}

function tooLarge(): InvalidRequestError {
  return new InvalidRequestError(`The request body is larger than ${BODY_LIMIT} bytes.`, 413)
}
