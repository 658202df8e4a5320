/**
 * Layering rules (STYLE.md): dependencies point inward. The domain imports
 * nothing outside itself; stores and transports depend on the domain, never
 * the reverse; the application never sees a concrete store, transport or
 * telemetry; the SDK package stands on its own copy of the generated contract; lib/ holds
 * small generic helpers that both may use.
 *
 * Rules that say what a folder may depend on ("only X") look at the
 * project's own code alone: which npm packages and Node built-ins a folder
 * uses is its own business (telemetry uses OpenTelemetry, config node:util).
 */

/** The project's own code, as dependency paths start. */
const OWN_CODE = '^(src|lib|packages|cli|web|gen|test|tools|bench|examples|scripts)/';

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
      name: 'stores-never-import-each-other',
      comment:
        'Each store implementation is one adapter of the port: if one borrowed from another, a change made ' +
        'for Redis would silently alter the embedded store (and the contract suite would test one thing twice). ' +
        'What they share belongs in the domain or the port.',
      severity: 'error',
      from: { path: '^src/store/([^/]+)/' },
      to: { path: '^src/store/[^/]+/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'transport-never-sees-a-store-implementation',
      severity: 'error',
      from: { path: '^src/transport/' },
      to: { path: '^src/(store/(memory|redis)|config|background)/' },
    },
    {
      name: 'generated-code-stays-at-the-edges',
      comment:
        'Generated protobuf types stop at the mappers (STYLE.md, gRPC): only the transport, the SDK and the ' +
        'code that plays a client (the CLI, tests, tools, benchmarks, examples) may see gen/. Anywhere else, a ' +
        'proto change would ripple into the domain, the stores or the use cases.',
      severity: 'error',
      from: { pathNot: '^(src/transport|packages/sdk|cli|gen|test|tools|bench|examples)/' },
      to: { path: '^gen/' },
    },
    {
      name: 'background-runs-use-cases-only',
      comment:
        'A background loop only schedules use cases (runOnce calls the app layer); it never reaches a store, ' +
        'the transport, telemetry or config itself, so the loops stay replaceable and their work testable ' +
        'through the app layer.',
      severity: 'error',
      from: { path: '^src/background/' },
      to: { path: OWN_CODE, pathNot: '^(src/(background|app|domain)|lib)/' },
    },
    {
      name: 'config-reads-into-settings-types',
      comment:
        'Config turns the environment into the settings the app and the loops declare they need, so it may ' +
        'name those settings types and nothing else outside the domain and lib: it never depends on the code ' +
        'it configures. The types live beside that code today (ProtocolSettings in app/app-context.ts, ' +
        'MaintenanceIntervals in background/maintenance.ts), so exactly those two files are allowed; given ' +
        'files of their own, the allowance should shrink to them.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: {
        path: OWN_CODE,
        pathNot: ['^(src/(config|domain)|lib)/', '^src/app/app-context\\.ts$', '^src/background/maintenance\\.ts$'],
      },
    },
    {
      name: 'telemetry-implements-its-port',
      comment:
        'Telemetry implements the Telemetry port of app/ports.ts over domain types (transitions, events); it ' +
        'must not reach use cases, stores, the transport or config, so that what is observed is decided by ' +
        'the app layer and telemetry can be swapped without touching it. lib/ is generic and allowed.',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: OWN_CODE, pathNot: ['^(src/(telemetry|domain)|lib)/', '^src/app/ports\\.ts$'] },
    },
    {
      name: 'shipped-code-never-imports-test-code',
      comment:
        'What the server and the SDK ship must not depend on tests, tools, benchmarks, examples or scripts: ' +
        'they are not built for production, may start processes or weaken checks, and would drag test ' +
        'dependencies into dist/.',
      severity: 'error',
      from: { path: '^(src|lib|packages/sdk|cli)/' },
      to: { path: '^(test|tools|bench|examples|scripts)/' },
    },
    {
      name: 'dashboard-api-is-a-thin-transport',
      comment:
        "The dashboard's HTTP API maps requests onto the application layer, as the gRPC handlers do: it may use " +
        'the app, the domain, the store port types, lib and the gRPC transport it shares rules with (the method ' +
        'table, the principals, page tokens), never a store implementation, config or the background loops.',
      severity: 'error',
      from: { path: '^src/transport/http/' },
      to: { path: '^src/(store/(memory|redis)|config|background|telemetry)/' },
    },
    {
      name: 'browser-code-sees-the-api-types-only',
      comment:
        'The dashboard (web/) runs in a browser: of our code it may use only the JSON shapes of its API ' +
        '(src/transport/http/api-types.ts, which imports nothing), so no server code can reach the bundle and ' +
        'the wire shape has one definition.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: OWN_CODE, pathNot: ['^web/', '^src/transport/http/api-types\\.ts$'] },
    },
    {
      name: 'api-types-import-nothing',
      severity: 'error',
      from: { path: '^src/transport/http/api-types\\.ts$' },
      to: { path: OWN_CODE },
    },
    {
      name: 'sdk-package-is-self-contained',
      comment:
        'The SDK is an installable package (packages/sdk): what it imports of ours must be inside it, or the ' +
        'published tarball would miss it. It carries its generated contract (packages/sdk/gen, by buf) and ' +
        'its copies of lib/ helpers (packages/sdk/lib, by scripts/sdk-lib-copies.mjs); never the server.',
      severity: 'error',
      from: { path: '^packages/sdk/' },
      to: { path: OWN_CODE, pathNot: '^packages/sdk/' },
    },
    {
      name: 'sdk-package-copies-stay-inside-it',
      comment:
        "The SDK package's generated code and lib/ copies are its own: the rest of the repository uses gen/ " +
        'and lib/, so that each has one source, and the SDK through its entry point or its modules. The unit ' +
        "tests of the SDK's parts hand them its own generated types, as does the benchmark's hand-written " +
        "worker, which runs the SDK's beat and fetch loops.",
      severity: 'error',
      from: { pathNot: '^(packages/sdk|test/unit/sdk)/|^bench/(ojs-bench|protocol-worker)\\.ts$' },
      to: { path: '^packages/sdk/(gen|lib)/' },
    },
    {
      name: 'cli-is-a-client',
      comment:
        'The ojs command is a client of the contract like the SDK: it speaks gRPC through gen/ and may use ' +
        "lib/, never the server's internals, so that it works against any server that honours the contract. " +
        "It opens its channel as the SDK does (TLS, tokens) through the SDK's entry point, its public API, " +
        'never its inner modules, generated code or lib/ copies.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(src|packages/sdk)/', pathNot: '^packages/sdk/src/index\\.ts$' },
    },
    {
      name: 'examples-use-the-sdk',
      comment: "Examples are what users copy: they must work with the published SDK and contract, not the server's internals.",
      severity: 'error',
      from: { path: '^examples/' },
      to: { path: '^src/' },
    },
    {
      name: 'lib-is-generic',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(src|packages|cli|gen)/' },
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
    // dependency-cruiser parses with swc without JSX, so the dashboard's .tsx files are left out here; the
    // dashboard build (scripts/build-web.mjs) refuses any import of ours from web/ but the API types instead.
    exclude: { path: '\\.tsx$' },
    tsPreCompilationDeps: true,
    // dependency-cruiser's own TypeScript parser needs TypeScript below 7; without it, the fallback
    // misses type-only re-exports (`export type { X } from './x'`). swc (already here for jest) sees them.
    // Neither marks a dependency as type-only, so no rule can tell `import type` from a value import.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
