#!/usr/bin/env node
// Makes sure the tools of the Python and Go example workers (examples/) are
// installed for the polyglot tests: Debian's python3 with grpcio and
// protobuf, protoc with the Python and Go gRPC plugins, Go, and Debian's Go
// sources of grpc-go and protobuf (built offline in GOPATH mode). When some
// are missing it installs their Debian packages if it can (root with
// apt-get); otherwise it stops and says exactly what to install.
import { existsSync } from 'node:fs';
import { has, requireDebianPackages, succeeds } from './debian-packages.mjs';

/** Each Debian package and how to tell it is installed. */
const PACKAGES = [
  // The python3 on PATH may be another one (pyenv): the workers run /usr/bin/python3.
  ['python3-grpcio', () => succeeds('/usr/bin/python3', ['-c', 'import grpc'])],
  ['python3-protobuf', () => succeeds('/usr/bin/python3', ['-c', 'import google.protobuf'])],
  // Debian's protoc: Python code from a newer protoc does not load on Debian's protobuf runtime.
  ['protobuf-compiler', () => existsSync('/usr/bin/protoc') && existsSync('/usr/include/google/protobuf/struct.proto')],
  ['protobuf-compiler-grpc', () => existsSync('/usr/bin/grpc_python_plugin')],
  ['golang-go', () => has('go')],
  ['protoc-gen-go', () => has('protoc-gen-go')],
  ['protoc-gen-go-grpc', () => has('protoc-gen-go-grpc')],
  ['golang-google-grpc-dev', () => existsSync('/usr/share/gocode/src/google.golang.org/grpc/version.go')],
  ['golang-google-protobuf-dev', () => existsSync('/usr/share/gocode/src/google.golang.org/protobuf/types/known/structpb')],
  // Named explicitly: otherwise apt satisfies grpc's dependency with the 1.3
  // package, whose code crashes on the first call. registry.go is new in 1.4.
  ['golang-github-golang-protobuf-1-5-dev', () => existsSync('/usr/share/gocode/src/github.com/golang/protobuf/proto/registry.go')],
];

export function ensurePolyglot() {
  requireDebianPackages(PACKAGES, 'The polyglot tests (test/polyglot) build and run the Python and Go example workers');
}

if (import.meta.url === `file://${process.argv[1]}`) ensurePolyglot();
