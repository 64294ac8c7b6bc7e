/** What `promise` rejected with; the test fails, naming `what` and the value, when it resolves instead. */
export async function rejectionOf(promise: Promise<unknown>, what = 'a rejection'): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected ${what}, got ${JSON.stringify(value)}`)
    },
    (reason: unknown) => reason,
  )
}
