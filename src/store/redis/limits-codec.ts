import type { QueueLimits } from '../../domain/queue-limits';
import { unexpectedReply } from './reply';

/**
 * A queue's limits as the limits hash holds them (keys.ts limits):
 * "maxActive,rate limit,rate period ms", '' where unset. lua/claim.lua
 * reads the same text.
 */
export function encodeQueueLimits(limits: QueueLimits): string {
  const { maxActive, rate } = limits;
  return [maxActive ?? '', rate?.limit ?? '', rate?.periodMs ?? ''].join(',');
}

/** The limits a stored text holds; undefined for '' (no limits). */
export function decodeQueueLimits(text: string): QueueLimits | undefined {
  if (text === '') return undefined;
  const parts = text.split(',');
  const numbers = parts.map((part) => (part === '' ? undefined : Number(part)));
  if (parts.length !== 3 || numbers.some((n) => n !== undefined && !Number.isInteger(n))) return unexpectedReply('queue limits', text);
  const [maxActive, limit, periodMs] = numbers;
  const limits: QueueLimits = {};
  if (maxActive !== undefined) limits.maxActive = maxActive;
  if (limit !== undefined && periodMs !== undefined) limits.rate = { limit, periodMs };
  return limits;
}
