import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, SETTINGS } from '../../../src/config/config';
import { parseDuration } from '../../../lib/duration';
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
