import { ServerReflection, ServerReflectionService } from 'nice-grpc-server-reflection';

/**
 * gRPC server reflection, v1 and v1alpha, serving the descriptor set that
 * `buf build` makes from proto/ (gen/descriptor-set.binpb): real file names
 * and real dependencies, which strict clients such as `buf curl` require.
 * The v1alpha messages are identical on the wire, so one implementation
 * answers both paths.
 */
export function reflectionServices(descriptorSet: Uint8Array, serviceNames: readonly string[]) {
  const implementation = ServerReflection(descriptorSet, [...serviceNames, ...REFLECTION_SERVICE_NAMES]);
  const v1 = ServerReflectionService;
  // The v1alpha copy differs from v1 only in its path.
  const v1alpha = {
    serverReflectionInfo: { ...v1.serverReflectionInfo, path: '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo' },
  };
  return [
    { definition: v1, implementation },
    { definition: v1alpha, implementation },
  ];
}

const REFLECTION_SERVICE_NAMES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'];

/** The full paths of the reflection methods, v1 and v1alpha (for the authorisation table). */
export const REFLECTION_METHOD_PATHS = REFLECTION_SERVICE_NAMES.map((name) => `/${name}/ServerReflectionInfo`);
