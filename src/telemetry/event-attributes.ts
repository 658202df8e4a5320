import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { EventType } from '../domain/event-catalog';
import type { JsonObject, JsonValue } from '../domain/json';
import type { TimeoutKind } from '../domain/timeouts';

/**
 * A lifecycle event's data as span event attributes, under the keys the
 * event has on WatchEvents (ojs-events 4). Attributes hold scalars and
 * arrays of them only, so a nested object becomes dotted keys
 * (`error.code`) one level deep; anything deeper, or an array, is kept as
 * its JSON text.
 */
export function eventAttributes(data: JsonObject): Attributes {
  const attributes: Attributes = {};
  for (const [key, value] of Object.entries(data)) {
    if (isObject(value)) {
      for (const [inner, innerValue] of Object.entries(value)) {
        const flat = scalarOrJson(innerValue);
        if (flat !== undefined) attributes[`${key}.${inner}`] = flat;
      }
    } else {
      const flat = scalarOrJson(value);
      if (flat !== undefined) attributes[key] = flat;
    }
  }
  return attributes;
}

/** The timeout kind (timeouts.md 11.2 `timeout_kind`) of each timeout event (timeouts.md 11.1). */
const TIMEOUT_KINDS: Readonly<Partial<Record<EventType, TimeoutKind>>> = {
  'job.timeout': 'execution',
  'job.stalled': 'stalled',
  'job.ttl_expired': 'enqueue_ttl',
  'job.total_timeout': 'total',
};

/** The kind of timeout an event reports, or undefined when it is not a timeout event. */
export function timeoutKindOf(type: EventType): TimeoutKind | undefined {
  return TIMEOUT_KINDS[type];
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalarOrJson(value: JsonValue | undefined): AttributeValue | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'object' ? JSON.stringify(value) : value;
}
