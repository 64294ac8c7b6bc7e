/**
 * `new Date(ms).toISOString()` without the Date: every session read formats its `expires`, and in a
 * loaded server the Date allocation and the runtime call cost a few µs where this costs a fraction.
 */

/** '00' … '99'. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => (n < 10 ? `0${n}` : `${n}`))
/** Milliseconds of 9999-12-31T23:59:59.999Z, the last instant with a four-digit year. */
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999

/**
 * The same string as `new Date(ms).toISOString()`, e.g. `2026-11-23T14:31:35.000Z`.
 * @throws RangeError for a time that is not a valid Date, as toISOString does.
 * @example
 * ```ts
 * isoDate(0) // '1970-01-01T00:00:00.000Z'
 * ```
 */
export function isoDate(ms: number): string {
  // Years before 1970 and after 9999 (signed six-digit years) and fractional ms: leave them to Date.
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_FOUR_DIGIT_MS) return new Date(ms).toISOString()
  const days = Math.floor(ms / 86_400_000)
  let rest = ms - days * 86_400_000
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  // Days since the epoch to a proleptic Gregorian date, with March as the first month of the year
  // so that the leap day ends it (Howard Hinnant's civil_from_days).
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365)
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const ms3 = millis < 10 ? `00${millis}` : millis < 100 ? `0${millis}` : `${millis}`
  // 1970 to 9999 here: always four digits.
  return `${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${ms3}Z`
}
