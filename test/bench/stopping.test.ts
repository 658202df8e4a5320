import { killLeftovers, track, withRedis, withServerProcess } from '../../bench/servers';

/**
 * A benchmark run that is stopping (interrupted, or at its end) kills what
 * it started; the phases still under way must not start what nothing would
 * kill. This file's run of the module is stopped for good: nothing else here.
 */
describe('the benchmark, once stopping', () => {
  it('kills what it started, kills at once what starts after, and starts no redis-server or server', async () => {
    const killed: string[] = [];
    track(async () => {
      killed.push('before');
    });
    await killLeftovers();
    expect(killed).toEqual(['before']);

    // A process whose start was under way when the run began to stop.
    track(async () => {
      killed.push('after');
    });
    expect(killed).toEqual(['before', 'after']);

    await expect(withRedis(async () => 'ran')).rejects.toThrow('a redis-server not started: the run is stopping');
    await expect(withServerProcess({}, async () => 'ran')).rejects.toThrow('a server process not started: the run is stopping');
  });
});
