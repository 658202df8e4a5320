import { readFileSync } from 'node:fs';

/** CPU time a process has used so far, in microseconds (from /proc: Linux only). */
export function processCpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** CPU microseconds per job of this process and of `pids` while `run` handles `jobs` jobs. */
export async function cpuPerJob<T>(
  jobs: number,
  pids: readonly number[],
  run: () => Promise<T>,
): Promise<{ result: T; self: number; others: number[] }> {
  const self = process.cpuUsage();
  const before = pids.map(processCpuMicros);
  const result = await run();
  const used = process.cpuUsage(self);
  return { result, self: (used.user + used.system) / jobs, others: pids.map((pid, i) => (processCpuMicros(pid) - before[i]!) / jobs) };
}

/** Resident memory of a process now, in bytes (VmRSS in /proc: Linux only). */
export function processRssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
