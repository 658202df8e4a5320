import { envDetector, hostDetector, processDetector, type ResourceDetector } from '@opentelemetry/resources';

/**
 * The process's resource attributes without its command line. The standard
 * process detector exports `process.command_args`, the full argv, and flags
 * carry secrets (`--redis-url redis://:password@...`); what identifies the
 * process (pid, executable, runtime, owner, the script it runs) stays.
 */
export const processDetectorWithoutArgs: ResourceDetector = {
  detect(config) {
    const { attributes = {} } = processDetector.detect(config);
    const { [COMMAND_ARGS]: _commandArgs, ...kept } = attributes;
    return { attributes: kept };
  },
};

/** `process.command_args` (semantic conventions): the attribute that would export the argv. */
const COMMAND_ARGS = 'process.command_args';

/**
 * The detectors the server runs: NodeSDK's defaults (environment, process,
 * host), with the process detector that leaves the command line out. Fixed
 * in code (OTEL_NODE_RESOURCE_DETECTORS is not read), so no setting brings
 * the command line back.
 */
export const RESOURCE_DETECTORS: readonly ResourceDetector[] = [envDetector, processDetectorWithoutArgs, hostDetector];
