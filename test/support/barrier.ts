/**
 * A meeting point for concurrent requests: each call waits until `count` calls have arrived, then
 * all go on at once. Wrapped around an adapter method, it makes a race happen every time (both
 * callbacks past their lookups before either writes) instead of now and then.
 */
export function barrier(count: number): () => Promise<void> {
  const waiting: (() => void)[] = []
  return () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve)
      if (waiting.length === count) for (const go of waiting.splice(0)) go()
    })
}
