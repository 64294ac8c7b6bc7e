// The npm registry reachable from our machines serves only the Linux builds of unrs-resolver's
// platform bindings (an optional dependency of jest 30's resolver). `npm install` skips the missing
// optional packages silently and leaves them out of package-lock.json, which `npm ci` then rejects
// as out of sync. This records them in the lockfile with their os/cpu, as npm would on a full
// registry, so `npm ci` sees a complete tree and skips them on other platforms without fetching.
// Run it after any `npm install` that rewrites the lockfile: node scripts/lock-platform-bindings.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'))
const platform = {
  'android-arm-eabi': ['android', 'arm'], 'android-arm64': ['android', 'arm64'],
  'darwin-arm64': ['darwin', 'arm64'], 'darwin-x64': ['darwin', 'x64'], 'freebsd-x64': ['freebsd', 'x64'],
  'linux-arm-gnueabihf': ['linux', 'arm'], 'linux-arm-musleabihf': ['linux', 'arm'],
  'linux-arm64-gnu': ['linux', 'arm64'], 'linux-arm64-musl': ['linux', 'arm64'],
  'linux-loong64-gnu': ['linux', 'loong64'], 'linux-loong64-musl': ['linux', 'loong64'],
  'linux-ppc64-gnu': ['linux', 'ppc64'], 'linux-riscv64-gnu': ['linux', 'riscv64'], 'linux-riscv64-musl': ['linux', 'riscv64'],
  'linux-s390x-gnu': ['linux', 's390x'], 'linux-x64-gnu': ['linux', 'x64'], 'linux-x64-musl': ['linux', 'x64'],
  'openharmony-arm64': ['openharmony', 'arm64'],
  'win32-arm64-msvc': ['win32', 'arm64'], 'win32-ia32-msvc': ['win32', 'ia32'], 'win32-x64-msvc': ['win32', 'x64'],
}
let added = 0
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith('node_modules/unrs-resolver')) continue
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    if (lock.packages[key]) continue
    const suffix = name.replace('@unrs/resolver-binding-', '')
    const [os, cpu] = platform[suffix] ?? []
    if (!os) throw new Error(`unknown platform binding ${name}`)
    lock.packages[key] = { version, cpu: [cpu], dev: true, license: 'MIT', optional: true, os: [os] }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))))
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`)
console.log(`recorded ${added} platform bindings`)
