import { FetchSession } from '../../../src/app/fetch-session';

/** Whether `promise` has settled once the microtasks queued so far have run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise(setImmediate);
  return settled;
}

describe('FetchSession', () => {
  it('claims at once when it opens, then waits for a wake', async () => {
    const session = new FetchSession('w1', ['default']);

    expect(await session.next()).toBe('claim');
    const waiting = session.next();
    expect(await isSettled(waiting)).toBe(false);

    session.wake();

    expect(await waiting).toBe('claim');
  });

  it('remembers a wake that came while it was not waiting, once', async () => {
    const session = new FetchSession('w1', ['default']);
    await session.next();

    session.wake();
    session.wake();

    expect(await session.next()).toBe('claim');
    expect(await isSettled(session.next())).toBe(false);
  });

  it('ends a wait, and every wait after it, when the session ends', async () => {
    const session = new FetchSession('w1', ['default']);
    await session.next();
    const waiting = session.next();

    session.end('client_cancelled');
    session.wake();

    expect(await waiting).toBe('end');
    expect(await session.next()).toBe('end');
    expect(session.endReason).toBe('client_cancelled');
  });

  it('ends rather than claims when it ended before its wake was taken', async () => {
    const session = new FetchSession('w1', ['default']);
    await session.next();
    session.wake();

    session.end('max_wait');

    expect(await session.next()).toBe('end');
  });

  it('keeps the first reason it ended for', () => {
    const session = new FetchSession('w1', ['default']);

    session.end('not_running');
    session.end('client_cancelled');

    expect(session.endReason).toBe('not_running');
  });
});
