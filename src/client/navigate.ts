/** Page navigations: to a URL, and a form POST (how OAuth sign-in leaves for the provider). */

/** Goes to `url`. A URL that differs from this page only by its fragment would not load anything: reload then. */
export function navigate(url: string): void {
  const target = new URL(url, location.href)
  const here = new URL(location.href)
  location.assign(target.href)
  if (target.hash && target.href.split('#')[0] === here.href.split('#')[0]) location.reload()
}

/** Submits a hidden form, as a user clicking a sign-in button on the server's own page would. */
export function submitForm(action: string, fields: Record<string, string>): void {
  const form = document.createElement('form')
  form.method = 'POST'
  form.action = action
  form.hidden = true
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input')
    input.type = 'hidden'
    input.name = name
    input.value = value
    form.append(input)
  }
  document.body.append(form)
  form.submit()
}
