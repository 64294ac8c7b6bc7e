/**
 * The escaping HTML builder behind the built-in pages. Every value interpolated into an `html`
 * template is escaped unless it is already `SafeHtml`, so forgetting to escape is impossible and
 * trusting markup takes an explicit `raw()`.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross_Site_Scripting_Prevention_Cheat_Sheet.html
 */

// The backtick is escaped too: old IE treated it as an attribute quote, and escaping it costs nothing.
const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
}

/**
 * Escapes a value for HTML text and quoted attribute values: `& < > " ' \``.
 * `null` and `undefined` become the empty string; anything else goes through `String()`.
 *
 * It does not make a value safe inside `<script>`, `<style>` or a URL attribute (`href`, `src`,
 * `action`): those need their own validation.
 *
 * @param value The value to escape.
 * @returns The escaped text.
 * @example
 * escapeHtml('<b title="x">') // '&lt;b title=&quot;x&quot;&gt;'
 * @see https://html.spec.whatwg.org/multipage/syntax.html#syntax-charref
 */
export function escapeHtml(value: unknown): string {
  if (value === null || value === undefined) return ''
  return String(value).replace(/[&<>"'`]/g, (char) => ENTITIES[char] ?? char)
}

/**
 * Markup that is already safe to emit: the result of `html` or `raw`. A class rather than a plain
 * `{ __html }` object so that a look-alike object from user data cannot pass as trusted markup.
 */
export class SafeHtml {
  /** The markup itself. */
  readonly __html: string

  /** @param markup Markup the caller vouches for. Prefer `html` or `raw` to calling this. */
  constructor(markup: string) {
    this.__html = markup
  }

  /** The markup, so a `SafeHtml` can be used where a string is expected. */
  toString(): string {
    return this.__html
  }
}

/**
 * Marks trusted markup so `html` inserts it unescaped. Use only for constant strings or text
 * already validated for its context (as the theme's CSS is).
 *
 * @param markup The trusted markup.
 * @returns The markup as `SafeHtml`.
 * @example
 * html`<p>${raw('<b>bold</b>')}</p>`.__html // '<p><b>bold</b></p>'
 */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup)
}

/**
 * Tagged template that builds `SafeHtml`. Interpolated values are escaped; `SafeHtml` values are
 * inserted as they are; arrays are rendered item by item and joined; `null`, `undefined` and `false`
 * render nothing, so `${cond && html`...`}` works. Always quote attribute values in the template:
 * escaping cannot protect an unquoted attribute.
 *
 * @param strings The literal parts of the template.
 * @param values The interpolated values.
 * @returns The built markup.
 * @example
 * html`<p title="${'"hi"'}">${['a', html`<br>`, 'b']}</p>`.__html
 * // '<p title="&quot;hi&quot;">a<br>b</p>'
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let markup = strings[0] ?? ''
  values.forEach((value, index) => {
    markup += renderValue(value) + (strings[index + 1] ?? '')
  })
  return new SafeHtml(markup)
}

function renderValue(value: unknown): string {
  if (value instanceof SafeHtml) return value.__html
  if (Array.isArray(value)) return value.map(renderValue).join('')
  if (value === false) return ''
  return escapeHtml(value)
}
