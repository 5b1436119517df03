// Learning-rate schedules (optax/schedules): functions of the int32 step
// count, usable wherever optax takes a ScalarOrSchedule. Any JS function of
// the count works as a schedule; constantSchedule is optax's simplest.
import type { Array } from '../core/array.js';
import { type Schedule, checkScalar } from './base.js';

/** optax.constant_schedule: the same value at every step. */
export function constantSchedule(value: number | Array): Schedule {
  const v = checkScalar('optax.constantSchedule', value, 'value');
  return () => v;
}
