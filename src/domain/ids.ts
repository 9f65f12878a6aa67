import { randomInt } from 'node:crypto';

/**
 * Object ids: 18 decimal digits, the millisecond clock followed by five
 * random digits, so ids sort roughly by creation and look like ZITADEL's.
 */
export function newId(now = Date.now()): string {
  return `${now}${String(randomInt(100000)).padStart(5, '0')}`;
}
