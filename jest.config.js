/** Unit tests (`*.test.ts`) need nothing but Node; integration tests (`*.int.test.ts`) need a
 * running Docker engine and never skip in CI; end-to-end tests (`*.e2e.test.ts`) run the bundled
 * action (`node dist/index.js`, built first) against a local GitHub API stand-in. */
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }]
  },
  testEnvironment: 'node'
}

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/__tests__/**/*.test.ts'],
      testPathIgnorePatterns: [
        '\\.int\\.test\\.ts$',
        '\\.e2e\\.test\\.ts$',
        '\\.restart\\.test\\.ts$',
        '\\.fresh\\.test\\.ts$'
      ]
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/__tests__/**/*.int.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/__tests__/support/int-setup.ts']
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/__tests__/**/*.e2e.test.ts'],
      globalSetup: '<rootDir>/__tests__/e2e/build-dist.mjs',
      setupFilesAfterEnv: ['<rootDir>/__tests__/support/int-setup.ts']
    },
    {
      // A new Debian machine in a container runs the README's setup (minutes): npm run
      // test:fresh-machine.
      ...common,
      displayName: 'fresh-machine',
      testMatch: ['<rootDir>/__tests__/**/*.fresh.test.ts']
    },
    {
      // Restarts the Docker daemon: run alone and last (npm run test:daemon-restart).
      ...common,
      displayName: 'daemon-restart',
      testMatch: ['<rootDir>/__tests__/**/*.restart.test.ts'],
      globalSetup: '<rootDir>/__tests__/e2e/build-dist.mjs',
      setupFilesAfterEnv: ['<rootDir>/__tests__/support/int-setup.ts']
    }
  ]
}
