// The package.json that ships. `npm pack` and `npm publish` put package.json into the tarball as it is
// on disk, and an installed package's manifest is that file: with this repository's scripts in it,
// `npm install` of the tarball warns about its `prepare` (npm 11 lists it as an install script to
// approve), and the development fields are noise in every app's node_modules.
//
// `prepack` builds, then runs `strip`: package.json is set aside (as package.json.pack-backup) and
// rewritten without the development fields; npm packs that. `postpack` runs `restore`. The
// repository's own package.json keeps `prepare`: an install from a git URL runs it to build dist/
// (npm does not run prepack there).
//
// Usage: node scripts/pack-manifest.mjs strip|restore
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'

const MANIFEST = 'package.json'
const BACKUP = 'package.json.pack-backup'

/** Fields only this repository uses: its scripts (all of them, `prepare` too), its development dependencies, npm's `allowScripts` for them and its `overrides`. */
const DEVELOPMENT_FIELDS = ['scripts', 'devDependencies', 'allowScripts', 'overrides']

/** The manifest without the development fields, every other field as it is, in its order. */
function shippedManifest(manifest) {
  return Object.fromEntries(Object.entries(manifest).filter(([field]) => !DEVELOPMENT_FIELDS.includes(field)))
}

function strip() {
  // A pack that failed after `strip` skips `postpack`: package.json is then the stripped one and the
  // backup the repository's, so the backup is kept and stripped again.
  if (existsSync(BACKUP)) process.stderr.write(`pack-manifest: ${BACKUP} is there from a pack that did not finish; it is the repository's package.json\n`)
  else copyFileSync(MANIFEST, BACKUP)
  const manifest = JSON.parse(readFileSync(BACKUP, 'utf8'))
  writeFileSync(MANIFEST, `${JSON.stringify(shippedManifest(manifest), null, 2)}\n`)
}

function restore() {
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST)
}

const command = process.argv[2]
if (command === 'strip') strip()
else if (command === 'restore') restore()
else {
  process.stderr.write('Usage: node scripts/pack-manifest.mjs strip|restore\n')
  process.exitCode = 1
}
