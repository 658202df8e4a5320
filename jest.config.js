const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
};

/**
 * Two projects: everything on the in-memory store, and the gRPC integration
 * and fuzz tests again on Redis (plus the multi-replica tests, which need it). The
 * Redis project starts one redis-server of its own for the run; each test
 * server in it uses a key prefix of its own. Integration tests share one
 * server per file.
 *
 * @type {import('jest').Config}
 */
module.exports = {
  testTimeout: 20000,
  projects: [
    {
      displayName: 'memory',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/{unit,contract,integration,polyglot,sdk,fuzz,security,cli,web,bench}/**/*.test.ts'],
    },
    {
      displayName: 'redis',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/{integration,replicas,fuzz}/**/*.test.ts'],
      // Starting the server process is about its own flags, signals and OTEL_* variables, whatever the store; the secrets
      // test starts a password-protected redis-server of its own, the health port test one it stops.
      testPathIgnorePatterns: [
        '/test/integration/main-process\\.test\\.ts$',
        '/test/integration/secrets\\.test\\.ts$',
        '/test/integration/health-port\\.test\\.ts$',
        '/test/integration/otlp-export\\.test\\.ts$',
      ],
      globalSetup: '<rootDir>/test/support/redis-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/redis-global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/use-redis-backend.ts'],
    },
  ],
};
