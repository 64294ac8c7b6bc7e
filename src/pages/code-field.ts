/**
 * The field a mailed code is typed in (the e-mail sign-in code, the sign-up's, the change of
 * address's): digits and spaces, the phone's keypad, the code offered by the keyboard from the mail.
 */
import { html, type SafeHtml } from './html.js'

/** A labelled `code` input for a mailed code, focused; `label` is escaped. */
export function mailedCodeField(id: string, label: string): SafeHtml {
  return html`<div><label for="${id}">${label}</label>
<input id="${id}" type="text" name="code" inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" maxlength="16" required autofocus></div>`
}
