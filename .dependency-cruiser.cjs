/**
 * Layering rules (STYLE.md): dependencies point inward. The domain imports
 * nothing outside itself; stores and transports depend on the domain, never
 * the reverse; the application never sees a concrete store, transport or
 * telemetry; the SDK stands on the generated contract alone; lib/ holds
 * small generic helpers that both may use.
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'app-sees-ports-only',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/(transport|telemetry|config|background|store/(memory|redis))/' },
    },
    {
      name: 'store-port-depends-on-domain-only',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(app|transport|telemetry|config|background)/' },
    },
    {
      name: 'transport-never-sees-a-store-implementation',
      severity: 'error',
      from: { path: '^src/transport/' },
      to: { path: '^src/(store/(memory|redis)|config|background)/' },
    },
    {
      name: 'sdk-stands-on-the-contract',
      severity: 'error',
      from: { path: '^sdk/' },
      to: { path: '^src/' },
    },
    {
      name: 'lib-is-generic',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(src|sdk|gen)/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
