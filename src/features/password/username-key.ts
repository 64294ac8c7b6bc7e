/**
 * A username's skeleton: the key it is unique under and found by. Two names with one skeleton look
 * alike to a reader (`Ada`, `ada`, `ａｄａ`, `a.da`; `adrnin` and `admin`; `paypa1` and `paypal`;
 * Cyrillic `аdmin` and Latin `admin`), so they are one name: the second is refused or collides.
 *
 * The steps: NFKC (fullwidth and other compatibility forms become the plain ones), case folded
 * (upper case, then lower: `ß` becomes `ss`, `ς` `σ`, dotless `ı` `i`, beyond what toLowerCase
 * alone does), accents removed (NFD, combining marks dropped), lookalike letters mapped to one
 * (the table below), `.`, `_` and `-` removed, then `rn` read as `m` and `vv` as `w`.
 *
 * This is a small table of the confusions that matter for Latin-looking names, not Unicode's full
 * confusables data (UTS #39): docs/passwords.md says what it catches and what it does not.
 */

// One character to the one it is read as. Digits and pipes first, then Cyrillic and Greek letters
// that look like Latin ones; `i` and its lookalikes all become `l`, as `1` and `|` do.
const LOOKALIKES: Readonly<Record<string, string>> = {
  '0': 'o', '1': 'l', 'i': 'l', '|': 'l', 'ı': 'l', 'ɩ': 'l',
  'ɑ': 'a', 'ɡ': 'g',
  // Cyrillic
  'а': 'a', 'в': 'b', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'l', 'ј': 'j', 'ѕ': 's',
  'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'к': 'k', 'м': 'm', 'н': 'h', 'т': 't', 'ӏ': 'l', 'ь': 'b',
  // Greek
  'α': 'a', 'β': 'b', 'ε': 'e', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w',
}

const MARKS = /\p{M}/gu
const SEPARATORS = /[._-]/g

/**
 * The skeleton of a username: the key it is unique under and found by (`usernameSkeleton` of
 * `portcullis/providers/password`, e.g. for importing usernames with `adapter.setUsername`).
 *
 * @param name A username, or a name typed to sign in.
 * @example
 * ```ts
 * import { usernameSkeleton } from 'portcullis/providers/password'
 *
 * usernameSkeleton('Ada.Lovelace') === usernameSkeleton('adalovelace') // true
 * usernameSkeleton('adrnin') === usernameSkeleton('admin') // true
 * ```
 * @see https://www.unicode.org/reports/tr39/#Confusable_Detection
 */
export function usernameKey(name: string): string {
  const folded = name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFD').replace(MARKS, '')
  let key = ''
  for (const character of folded) key += LOOKALIKES[character] ?? character
  return key.replace(SEPARATORS, '').replaceAll('rn', 'm').replaceAll('vv', 'w')
}
