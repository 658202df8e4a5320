#!/usr/bin/env node
// Generates the gRPC stubs of the example workers from proto/ into git-ignored
// folders, so they never go stale, and optionally builds the Go worker:
//
//   node scripts/polyglot-stubs.mjs [python] [go] [--build]
//
//   python   examples/python-worker/gen/ojs/server/v1/*_pb2*.py
//   go       examples/go-worker/build/gopath/src/ojs.example/ojspb/*.pb.go
//   --build  also generates the Go stubs and compiles examples/go-worker/build/ojs-go-worker
//
// With neither language named it does both. It uses Debian's protoc on
// purpose (code from a newer protoc does not load on Debian's Python protobuf
// runtime) and builds Go in GOPATH mode against Debian's sources in
// /usr/share/gocode, without a module proxy. scripts/ensure-polyglot.mjs
// installs the tools.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const PROTOC = '/usr/bin/protoc';
const PROTO_DIR = 'proto/ojs/server/v1';
/** Where protoc finds google/protobuf/*.proto (Debian's libprotobuf-dev, a dependency of protobuf-compiler). */
const WELL_KNOWN_TYPES = '/usr/include';
/** The Go import path (and package name) the stubs get; the protos have no go_package option. */
const GO_PACKAGE = 'ojs.example/ojspb';

export const pythonWorkerDir = join(root, 'examples', 'python-worker');
export const goWorkerDir = join(root, 'examples', 'go-worker');
export const goWorkerBinary = join(goWorkerDir, 'build', 'ojs-go-worker');

const protoFiles = () =>
  readdirSync(join(root, PROTO_DIR))
    .filter((name) => name.endsWith('.proto'))
    .toSorted()
    .map((name) => `${PROTO_DIR}/${name}`);

function protoc(args) {
  execFileSync(PROTOC, ['-I', 'proto', '-I', WELL_KNOWN_TYPES, ...args, ...protoFiles()], { cwd: root, stdio: 'inherit' });
}

function fresh(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

export function generatePythonStubs() {
  const out = join(pythonWorkerDir, 'gen');
  fresh(out);
  protoc([`--python_out=${out}`, `--grpc_python_out=${out}`, '--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin']);
}

export function generateGoStubs() {
  const gopathSrc = join(goWorkerDir, 'build', 'gopath', 'src');
  fresh(join(gopathSrc, GO_PACKAGE));
  // Without a go_package option every file must be mapped to the Go package by hand.
  const mappings = protoFiles()
    .map((file) => `M${file.slice('proto/'.length)}=${GO_PACKAGE}`)
    .join(',');
  protoc([
    `--go_out=${gopathSrc}`,
    `--go_opt=paths=import,${mappings}`,
    `--go-grpc_out=${gopathSrc}`,
    `--go-grpc_opt=paths=import,${mappings}`,
  ]);
}

/** The environment of an offline GOPATH-mode build: the stubs, then Debian's Go sources. */
export function goEnv() {
  return {
    ...process.env,
    GO111MODULE: 'off',
    GOPROXY: 'off',
    GOFLAGS: '',
    GOPATH: `${join(goWorkerDir, 'build', 'gopath')}:/usr/share/gocode`,
  };
}

export function buildGoWorker() {
  execFileSync('go', ['build', '-o', goWorkerBinary, '.'], { cwd: goWorkerDir, env: goEnv(), stdio: 'inherit' });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => !['python', 'go', '--build'].includes(arg));
  if (unknown.length > 0) {
    console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: node scripts/polyglot-stubs.mjs [python] [go] [--build]`);
    process.exit(2);
  }
  const both = !args.includes('python') && !args.includes('go');
  if (both || args.includes('python')) generatePythonStubs();
  if (both || args.includes('go') || args.includes('--build')) generateGoStubs();
  if (args.includes('--build')) buildGoWorker();
}
