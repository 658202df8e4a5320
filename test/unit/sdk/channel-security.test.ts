import type { ChannelCredentials } from 'nice-grpc';
import { isLocal, resolveChannelSecurity } from '../../../packages/sdk/src/channel-security';

// oxlint-disable-next-line no-underscore-dangle -- grpc-js's one way to tell TLS credentials from plaintext ones
const isTls = (credentials: ChannelCredentials): boolean => credentials._isSecure();

describe('the SDK channel security', () => {
  it.each([
    ['127.0.0.1:9090', true],
    ['127.8.0.1:9090', true],
    ['localhost:9090', true],
    ['[::1]:9090', true],
    ['dns:///localhost:9090', true],
    ['dns://8.8.8.8/127.0.0.1:9090', true],
    ['unix:/run/ojs.sock', true],
    ['ojs:9090', false],
    ['10.0.0.7:9090', false],
    ['[2001:db8::1]:9090', false],
    ['dns:///ojs.example.org:443', false],
    ['localhost.example.org:9090', false],
  ])('tells whether %s stays on this machine (%s)', (address, local) => {
    expect(isLocal(address)).toBe(local);
  });

  it('takes TLS and the token from the environment, the options winning', () => {
    const env = { OJS_TLS: 'true', OJS_TOKEN: 'from-env' };
    const fromEnv = resolveChannelSecurity('ojs:443', {}, env);
    expect(fromEnv.token).toBe('from-env');
    expect(isTls(fromEnv.credentials)).toBe(true);
    const fromOptions = resolveChannelSecurity('127.0.0.1:9090', { tls: false, token: 'mine' }, env);
    expect(fromOptions.token).toBe('mine');
    expect(isTls(fromOptions.credentials)).toBe(false);
    expect(isTls(resolveChannelSecurity('ojs:9090', {}, {}).credentials)).toBe(false);
  });

  it('names the setting whose file it cannot read, and wants a certificate and its key together', () => {
    expect(() => resolveChannelSecurity('ojs:443', {}, { OJS_TLS_CA: '/nonexistent/ca.pem' })).toThrow(
      /OJS_TLS_CA: cannot read \/nonexistent\/ca.pem/,
    );
    expect(() => resolveChannelSecurity('ojs:443', { tls: { cert: Buffer.from('pem') } })).toThrow(/tls.cert and tls.key/);
  });

  it('sends a token in plaintext beyond loopback only when allowed, by option or environment', () => {
    expect(() => resolveChannelSecurity('ojs:9090', { token: 't' }, {})).toThrow(/refusing to send a token in plaintext to ojs:9090/);
    expect(resolveChannelSecurity('ojs:9090', { token: 't', allowPlaintextToken: true }, {}).token).toBe('t');
    expect(resolveChannelSecurity('ojs:9090', {}, { OJS_TOKEN: 't', OJS_ALLOW_PLAINTEXT_TOKEN: 'true' }).token).toBe('t');
    expect(resolveChannelSecurity('ojs:9090', { tls: true, token: 't' }, {}).token).toBe('t');
  });
});
