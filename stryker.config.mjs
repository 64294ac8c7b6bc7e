// Mutation testing of the security-critical code (npm run mutate; not part of npm test or CI).
// One Stryker run per scope: the mutants of one folder against only the suites that cover it, so a
// run fits in minutes here instead of hours. scripts/mutate.mjs picks the scope through
// PORTCULLIS_MUTATE_SCOPE and runs the scopes one after another.
import { fileURLToPath } from 'node:url'
import { SCOPES } from './scripts/mutate-scopes.mjs'

const name = process.env.PORTCULLIS_MUTATE_SCOPE ?? 'email'
const scope = SCOPES[name]
if (!scope) throw new Error(`Unknown mutation scope "${name}"; known: ${Object.keys(SCOPES).join(', ')}`)

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // Stryker's jest runner, with each mutant's run limited to the test files that reached it
  // (scripts/stryker-jest-by-file.mjs).
  testRunner: 'jest-by-file',
  plugins: ['@stryker-mutator/jest-runner', '@stryker-mutator/typescript-checker', './scripts/stryker-jest-by-file.mjs'],
  checkers: ['typescript'],
  // The checker type-checks src/ only (tsconfig.mutate.json): what a mutant must compile as is the
  // package; with the tests, examples and benches included, each check of a module most files import
  // took over twice as long, and kept the run's one checker busier than its test runner.
  tsconfigFile: 'tsconfig.mutate.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: scope.mutate,
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.ts',
    enableFindRelatedTests: false,
    // Stryker's jest runner wraps the test environment and resolves its name itself, without
    // substituting <rootDir>: the suite's environment (log capture) is given by its absolute path.
    // The constant-time scan reads the sources, which Stryker has instrumented: it is left out.
    config: {
      testMatch: scope.tests.map((test) => `<rootDir>/${test}`),
      testPathIgnorePatterns: ['/node_modules/', 'constant-time\\.test\\.ts$'],
      testEnvironment: fileURLToPath(new URL('./test/support/environment.cjs', import.meta.url)),
    },
  },
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  // perTest: each mutant runs only the tests that reached its code.
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.PORTCULLIS_MUTATE_CONCURRENCY ?? 2),
  // A mutant that makes a flow hang (a check that never resolves) is a timeout, counted as detected;
  // a short grace keeps such mutants from holding a worker long.
  timeoutMS: 8000,
  timeoutFactor: 1.5,
  // A mutant of a module-level constant (a regex, a table) is evaluated when its module loads, and code
  // a suite's set-up runs (a beforeAll) is reached outside any test: Stryker's coverage counts either for
  // no test ("static"). Running each against every test of the scope is
  // slow, so by default they are not: a purely static mutant is ignored, and one whose module is also
  // loaded inside some test (`jest.isolateModulesAsync`) counts as covered by those tests and is run
  // against them only, so it may be reported surviving where other tests would kill it. PORTCULLIS_MUTATE_STATIC=1
  // runs both kinds against every test of the scope (docs/development.md).
  ignoreStatic: process.env.PORTCULLIS_MUTATE_STATIC !== '1',
  // The suites' own servers (IdP, SMTP, databases) are started per suite; a worker is recycled now
  // and then so that a leak in one mutant's run cannot slow the next ones.
  maxTestRunnerReuse: 40,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  // Results are kept per scope (reports/, git-ignored): a later run of the scope tests only the
  // mutants whose code or covering tests changed. Stryker writes the file when a run completes;
  // scripts/mutate.mjs then copies it to mutation/ (committed) and starts a fresh clone from there.
  incremental: true,
  incrementalFile: `reports/stryker-incremental-${name}.json`,
  // One temp dir per scope: scopes may run side by side (a run uses one test runner, so one core),
  // and a run that ends cleans its own dir.
  tempDirName: `.stryker-tmp-${name}`,
  cleanTempDir: true,
  // docs/ is copied: the provider catalogue's suite (oauth-flow) checks docs/providers.md against the code.
  ignorePatterns: ['dist', 'coverage', 'reports', 'mutation', 'bench', 'scratch', '.stryker-tmp*', '*.sqlite', '*.log'],
}
