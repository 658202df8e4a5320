import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createFileRegistry, fromBinary, fromJsonString, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { WorkflowDefinition } from '../gen/ojs/server/v1/workflow_service';
import { usageError } from './exit-codes';

/** Where `npm run generate` writes the contract's descriptor set; the image ships it beside dist/. */
const DESCRIPTOR_SET = join('gen', 'descriptor-set.binpb');

/**
 * The WorkflowDefinition a file holds in the contract's JSON form (proto3
 * JSON: `{"chain": {"steps": [{"job": {"type": "a.b", "args": []}}]}}`,
 * snake_case or camelCase names, times in RFC 3339, enums by name). Read
 * with @bufbuild/protobuf against the descriptor set built from proto/, so
 * every rule of the JSON mapping holds and an unknown field is refused
 * here, naming it, rather than dropped.
 */
export function readWorkflowDefinition(file: string): WorkflowDefinition {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`--file: cannot read ${file}: ${messageOf(error)}`);
  }
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(descriptorSetPath())));
  const schema = registry.getMessage('ojs.server.v1.WorkflowDefinition');
  if (schema === undefined) throw new Error('the descriptor set has no ojs.server.v1.WorkflowDefinition: run `npm run generate`');
  try {
    return WorkflowDefinition.decode(toBinary(schema, fromJsonString(schema, text, { registry })));
  } catch (error) {
    throw usageError(`--file: ${file} is not JSON holding a workflow definition in the contract's JSON form: ${messageOf(error)}`);
  }
}

/** The descriptor set, found from this file upwards: cli/ under the tests, dist/cli/ when built. */
function descriptorSetPath(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const path = join(dir, DESCRIPTOR_SET);
    if (existsSync(path)) return path;
    if (dirname(dir) === dir) throw new Error(`cannot find ${DESCRIPTOR_SET} above ${__dirname}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
