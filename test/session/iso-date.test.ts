/**
 * isoDate formats session `expires` without a Date: it must give exactly what
 * `new Date(ms).toISOString()` gives, including where Date's own rules take over.
 */
import { describe, expect, it } from '@jest/globals'
import { isoDate } from '../../src/session/iso-date.js'

const viaDate = (ms: number): string => {
  try {
    return new Date(ms).toISOString()
  } catch (error) {
    return (error as Error).name
  }
}
const viaIsoDate = (ms: number): string => {
  try {
    return isoDate(ms)
  } catch (error) {
    return (error as Error).name
  }
}

describe('isoDate', () => {
  it('matches toISOString around every month boundary from 1970 to 2400, leap days and centuries included', () => {
    for (let year = 1970; year <= 2400; year++) {
      for (let month = 0; month < 12; month++) {
        const start = Date.UTC(year, month, 1)
        // expect() only on a difference: 25,860 calls of it took seconds of the suite.
        for (const ms of [start - 1, start, start + 999, start + 28 * 86_400_000, start + 29 * 86_400_000 - 1]) if (viaIsoDate(ms) !== viaDate(ms)) expect(viaIsoDate(ms)).toBe(viaDate(ms))
      }
    }
  })

  it('matches toISOString on 200,000 random instants up to the year 9999', () => {
    let seed = 42
    const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor(next() * 253_402_300_800_000)
      if (isoDate(ms) !== viaDate(ms)) expect(isoDate(ms)).toBe(viaDate(ms))
    }
  })

  it('leaves the edges to Date: before 1970, after 9999, fractions, and invalid times (RangeError)', () => {
    // Years 1 and -1 (Date writes them as 0001 and -000001) and Date's first instant: a fast path
    // taking negative times would write them unpadded.
    const before1970 = [-1, -86_400_001, -62_135_596_800_000, -62_198_755_200_000, -8.64e15]
    for (const ms of [...before1970, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      expect(viaIsoDate(ms)).toBe(viaDate(ms))
    }
    expect(() => isoDate(Number.NaN)).toThrow(RangeError)
  })
})
