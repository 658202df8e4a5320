import { OjsError } from '../../src/domain/errors';

/** The OjsError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<OjsError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OjsError) return error;
    throw error;
  }
  throw new Error('expected an OjsError');
}
