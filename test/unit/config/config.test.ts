import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, SETTINGS } from '../../../src/config/config';
import { parseDuration } from '../../../lib/duration';
import { DEFAULT_MEMORY_STORE_LIMITS } from '../../../src/store/memory/memory-store-limits';
import { projectRoot } from '../../../src/project-root';
import { thrownBy } from '../../support/thrown';

describe('configuration', () => {
  it('defaults to the protocol defaults on 0.0.0.0:9090', () => {
    const config = loadConfig({}, []);
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9090,
      protocol: { heartbeatIntervalMs: 5_000, heartbeatTimeoutMs: 30_000, visibilityTimeoutMs: 1_800_000, jobTimeoutMs: 1_800_000 },
      shutdownTimeoutMs: 30_000,
    });
    expect(config.protocol.streamKeepaliveMs).toBeLessThan(60_000);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads environment variables, and flags win over them', () => {
    const config = loadConfig({ OJS_PORT: '7000', OJS_HEARTBEAT_INTERVAL: '2s' }, ['--port', '7001', '--heartbeat-timeout', '10s']);
    expect(config.port).toBe(7001);
    expect(config.protocol).toMatchObject({ heartbeatIntervalMs: 2_000, heartbeatTimeoutMs: 10_000 });
  });

  it('refuses a heartbeat timeout shorter than three heartbeat intervals', () => {
    expect(() => loadConfig({ OJS_HEARTBEAT_INTERVAL: '5s', OJS_HEARTBEAT_TIMEOUT: '14s' }, [])).toThrow(/three heartbeat intervals/);
  });

  it('bounds the memory store by default, and reads its bounds with byte units', () => {
    expect(loadConfig({}, []).backend).toEqual({ kind: 'memory', ...DEFAULT_MEMORY_STORE_LIMITS });
    expect(loadConfig({ OJS_MEMORY_MAX_BYTES: '64KiB' }, ['--memory-max-jobs', '500']).backend).toEqual({
      kind: 'memory',
      maxJobs: 500,
      maxBytes: 65_536,
    });
    const error = thrownBy(() => loadConfig({ OJS_MEMORY_MAX_JOBS: '0', OJS_MEMORY_MAX_BYTES: '512MB' }, []));
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('OJS_MEMORY_MAX_JOBS (--memory-max-jobs) must be a positive whole number'),
      expect.stringContaining('OJS_MEMORY_MAX_BYTES (--memory-max-bytes) must be a positive size'),
    ]);
  });

  it('limits jobs and results to 1 MiB by default, and refuses limits a delivery could not carry', () => {
    expect(loadConfig({}, []).limits).toEqual({ maxJobBytes: 1_048_576, maxResultBytes: 1_048_576 });
    expect(loadConfig({ OJS_MAX_JOB_BYTES: '2MiB' }, ['--max-result-bytes', '64KiB']).limits).toEqual({
      maxJobBytes: 2_097_152,
      maxResultBytes: 65_536,
    });
    const error = thrownBy(() => loadConfig({ OJS_MAX_JOB_BYTES: '3MiB' }, []));
    expect((error as ConfigError).problems).toEqual([expect.stringContaining('a job and its result together may be at most')]);
  });

  it('keeps connections for ever and polices pings 5 s apart by default, and reads the connection policy', () => {
    expect(loadConfig({}, []).connections).toEqual({ maxAgeMs: 0, maxAgeGraceMs: 30_000, minPingIntervalMs: 5_000, maxStreams: 1_000 });
    expect(
      loadConfig({ OJS_MAX_CONNECTION_AGE: '10m' }, ['--max-connection-age-grace', '5s', '--min-ping-interval', '0s']).connections,
    ).toEqual({ maxAgeMs: 600_000, maxAgeGraceMs: 5_000, minPingIntervalMs: 0, maxStreams: 1_000 });
  });

  it('bounds streams and connections per principal by default with no enqueue rate, and reads every per-principal limit', () => {
    expect(loadConfig({}, []).principalLimits).toEqual({
      maxStreams: 10_000,
      maxConnections: 1_000,
      enqueueRatePerSecond: 0,
      enqueueBurst: 0,
    });
    const config = loadConfig({ OJS_ENQUEUE_RATE: '0.5', OJS_MAX_STREAMS_PER_CONNECTION: '0' }, [
      '--max-streams-per-principal',
      '20',
      '--max-connections-per-principal',
      '3',
      '--enqueue-burst',
      '10',
    ]);
    expect(config.principalLimits).toEqual({ maxStreams: 20, maxConnections: 3, enqueueRatePerSecond: 0.5, enqueueBurst: 10 });
    expect(config.connections.maxStreams).toBe(0);
    const error = thrownBy(() => loadConfig({ OJS_ENQUEUE_RATE: 'fast', OJS_MAX_STREAMS_PER_PRINCIPAL: '-1' }, ['--enqueue-burst', '1.5']));
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('OJS_ENQUEUE_RATE'),
      expect.stringContaining('OJS_MAX_STREAMS_PER_PRINCIPAL'),
      expect.stringContaining('OJS_ENQUEUE_BURST'),
    ]);
  });

  it('reads how Redis is probed and how long its commands may take', () => {
    expect(loadConfig({ OJS_BACKEND: 'redis' }, []).backend).toMatchObject({
      pingIntervalMs: 1_000,
      pingTimeoutMs: 1_000,
      commandTimeoutMs: 5_000,
    });
    const config = loadConfig({ OJS_BACKEND: 'redis', OJS_REDIS_PING_INTERVAL: '250ms' }, [
      '--redis-ping-timeout',
      '2s',
      '--redis-command-timeout',
      '10s',
    ]);
    expect(config.backend).toMatchObject({ kind: 'redis', pingIntervalMs: 250, pingTimeoutMs: 2_000, commandTimeoutMs: 10_000 });
    const error = thrownBy(() => loadConfig({ OJS_REDIS_COMMAND_TIMEOUT: 'never' }, []));
    expect((error as ConfigError).problems).toEqual([expect.stringContaining('OJS_REDIS_COMMAND_TIMEOUT (--redis-command-timeout)')]);
  });

  it('refuses a Redis key prefix without a hash tag, or holding a control character', () => {
    expect(loadConfig({ OJS_BACKEND: 'redis', OJS_REDIS_PREFIX: '{prod}:ojs' }, []).backend).toMatchObject({ prefix: '{prod}:ojs' });
    for (const [prefix, problem] of [
      ['prod', /must contain a \{hash tag\}, got "prod"/],
      ['{prod}\t', /must not hold a control character/],
    ] as const) {
      const error = thrownBy(() => loadConfig({ OJS_REDIS_PREFIX: prefix }, [])) as ConfigError;
      expect(error.problems).toEqual([expect.stringMatching(problem)]);
    }
  });

  it('serves no health port and leaves health and reflection open by default, and reads how to close them', () => {
    const defaults = loadConfig({}, []);
    expect(defaults.healthPort).toBeUndefined();
    expect(defaults.security).toMatchObject({ healthAccess: 'open', reflectionAccess: 'open' });
    const config = loadConfig({ OJS_HEALTH_PORT: '9091', OJS_AUTH_FILE: '/etc/ojs/auth/tokens.json', OJS_REFLECTION: 'off' }, [
      '--health-auth',
      'authenticated',
    ]);
    expect(config.healthPort).toBe(9091);
    expect(config.security).toMatchObject({ healthAccess: 'authenticated', reflectionAccess: 'off' });
    expect(loadConfig({}, ['--port', '0', '--health-port', '0']).healthPort).toBe(0);
  });

  it('refuses a health port that is the main port, unknown access, and access for principals without an auth file', () => {
    const error = thrownBy(() =>
      loadConfig({ OJS_HEALTH_PORT: '9090', OJS_REFLECTION: 'authenticated', OJS_HEALTH_AUTH: 'closed' }, []),
    ) as ConfigError;
    expect(error.problems).toEqual([
      expect.stringMatching(/^OJS_HEALTH_AUTH \(--health-auth\) must be one of open, authenticated, got "closed"/),
      expect.stringMatching(/^OJS_REFLECTION \(--reflection\) authenticated needs OJS_AUTH_FILE/),
      expect.stringMatching(/^OJS_HEALTH_PORT \(--health-port\) must differ from OJS_PORT/),
    ]);
  });

  it('reports every problem at once', () => {
    const error = thrownBy(() => loadConfig({ OJS_PORT: 'http', OJS_VISIBILITY_TIMEOUT: 'soon', OJS_LOG_LEVEL: 'loud' }, []));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(3);
  });

  it.each([
    ['250ms', 250],
    ['5s', 5_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['30', 30_000],
    ['1.5s', 1_500],
    ['7d', 604_800_000],
  ])('parses the duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '5 s', '-1s', '5w'])('refuses the duration %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('is documented: the README lists every setting with its flag and default', () => {
    const readme = readFileSync(join(projectRoot(), 'README.md'), 'utf8');
    for (const setting of Object.values(SETTINGS)) {
      expect(readme).toContain(`| \`--${setting.flag}\` | \`${setting.env}\` | \`${setting.defaultValue}\` |`);
    }
  });
});
