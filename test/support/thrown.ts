/** The error that `action` throws; fails the test when it returns instead. */
export function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, but it returned');
}
