import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A certificate and its key, as PEM file paths. */
export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
}

export interface IssueOptions {
  /** The subject common name. */
  commonName: string;
  /** subjectAltName entries, such as "DNS:localhost", "IP:127.0.0.1", "URI:spiffe://test/worker". */
  altNames?: string[];
  /** The CA that signs it (default: the main one). */
  ca?: string;
}

/**
 * Certificates made with Debian's openssl for one test file, in a temporary
 * directory that remove() deletes: CAs, and certificates they sign (P-256
 * keys, valid one day, usable by servers and clients alike).
 */
export class TestCertificates {
  private constructor(readonly dir: string) {}

  /** A new directory holding one CA, "ca". */
  static async create(): Promise<TestCertificates> {
    const certificates = new TestCertificates(mkdtempSync(join(tmpdir(), 'ojs-tls-')));
    await certificates.createCa('ca');
    return certificates;
  }

  /** A self-signed CA, `name`.pem with its key `name`.key. */
  async createCa(name: string): Promise<string> {
    const certFile = this.path(`${name}.pem`);
    await openssl(
      'req',
      '-x509',
      ...NEW_KEY,
      '-keyout',
      this.path(`${name}.key`),
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    return certFile;
  }

  /** A certificate `name`.pem and key `name`.key, signed by a CA. */
  async issue(name: string, options: IssueOptions): Promise<IssuedCertificate> {
    const ca = options.ca ?? 'ca';
    const [keyFile, csrFile, certFile, extFile] = ['key', 'csr', 'pem', 'ext'].map((ext) => this.path(`${name}.${ext}`)) as [
      string,
      string,
      string,
      string,
    ];
    await openssl('req', ...NEW_KEY, '-keyout', keyFile, '-out', csrFile, '-subj', `/CN=${options.commonName}`);
    const altNames = options.altNames ?? [];
    writeFileSync(
      extFile,
      [
        'basicConstraints=CA:FALSE',
        'extendedKeyUsage=serverAuth,clientAuth',
        ...(altNames.length > 0 ? [`subjectAltName=${altNames.join(',')}`] : []),
      ].join('\n'),
    );
    await openssl(
      'x509',
      '-req',
      '-in',
      csrFile,
      '-CA',
      this.path(`${ca}.pem`),
      '-CAkey',
      this.path(`${ca}.key`),
      '-CAcreateserial',
      '-out',
      certFile,
      '-days',
      '1',
      '-extfile',
      extFile,
    );
    return { certFile, keyFile };
  }

  /** A server certificate for 127.0.0.1 and localhost. */
  issueServer(name: string, ca?: string): Promise<IssuedCertificate> {
    return this.issue(name, { commonName: 'localhost', altNames: ['DNS:localhost', 'IP:127.0.0.1'], ...(ca === undefined ? {} : { ca }) });
  }

  path(file: string): string {
    return join(this.dir, file);
  }

  read(file: string): Buffer {
    return readFileSync(this.path(file));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function openssl(...args: string[]): Promise<void> {
  await run('openssl', args, { timeout: 10_000 });
}
