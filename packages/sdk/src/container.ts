import { existsSync, readFileSync } from 'node:fs';

/**
 * Whether this process runs inside a container (Docker, Podman, containerd,
 * Kubernetes), by the marks those leave behind.
 */
export function isInContainer(): boolean {
  if (existsSync('/.dockerenv') || existsSync('/run/.containerenv')) return true;
  if (process.env['KUBERNETES_SERVICE_HOST'] !== undefined) return true;
  try {
    return /docker|kubepods|containerd|libpod/.test(readFileSync('/proc/1/cgroup', 'utf8'));
  } catch {
    return false;
  }
}

/**
 * graceful-shutdown.md 4.3: inside a container the worker should be PID 1
 * (exec form), or a shell in front of it swallows SIGTERM and the platform
 * kills the worker without a graceful shutdown.
 */
export function pid1Warning(pid = process.pid, inContainer = isInContainer()): string | undefined {
  if (pid === 1 || !inContainer) return undefined;
  return `running as PID ${pid} inside a container: start the worker in exec form (CMD ["node", "worker.js"]) or behind an init that forwards signals, or SIGTERM may never reach it`;
}
