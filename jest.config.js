/** Unit tests (`*.test.ts`) need nothing but Node; integration tests (`*.int.test.ts`) need a
 * running Docker engine and never skip in CI. */
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
      testPathIgnorePatterns: ['\\.int\\.test\\.ts$', '\\.e2e\\.test\\.ts$']
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/__tests__/**/*.int.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/__tests__/support/int-setup.ts']
    }
  ]
}
