// Answers on cmdexe (edge.md §6) as the broker checks them before the dispatcher sees them.

import { describe, expect, it } from 'vitest';
import { parseAnswer } from '../../src/mqtt/commands.js';

const parse = (body: unknown, max = 1_000): ReturnType<typeof parseAnswer> =>
  parseAnswer(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), max);

describe('parseAnswer', () => {
  it('accepts an id, OK or ERROR, and any JSON info (or none)', () => {
    expect(parse({ id: 'c1', status: 'OK', info: { a: [1, null] } })).toEqual({ id: 'c1', status: 'OK', info: { a: [1, null] } });
    expect(parse({ id: 'c1', status: 'ERROR', info: 'jammed' })).toEqual({ id: 'c1', status: 'ERROR', info: 'jammed' });
    expect(parse({ id: 'c1', status: 'OK' })).toEqual({ id: 'c1', status: 'OK' });
  });

  it.each([
    ['not JSON', '{', 'not JSON'],
    ['another status', { id: 'c1', status: 'DONE' }, 'status'],
    ['no id', { status: 'OK' }, 'id'],
    ['an empty id', { id: '', status: 'OK' }, 'id'],
    ['an unknown member', { id: 'c1', status: 'OK', extra: 1 }, 'extra'],
    ['an array', [{ id: 'c1', status: 'OK' }], 'answer'],
  ])('refuses %s with a reason', (_what, body, reason) => {
    const out = parse(body);
    expect(typeof out).toBe('string');
    expect(out).toContain(reason);
  });

  it('takes the id from an MQTT 5 answer\'s Correlation Data, and refuses one naming another command', () => {
    const withCorrelation = (body: unknown): ReturnType<typeof parseAnswer> => parseAnswer(Buffer.from(JSON.stringify(body)), 1_000, 'c7');
    expect(withCorrelation({ status: 'OK' })).toEqual({ id: 'c7', status: 'OK' });
    expect(withCorrelation({ id: 'c7', status: 'ERROR', info: 'jammed' })).toEqual({ id: 'c7', status: 'ERROR', info: 'jammed' });
    expect(withCorrelation({ id: 'c8', status: 'OK' })).toContain('correlation data');
  });

  it('refuses a payload over the limit before parsing it', () => {
    expect(parse({ id: 'c1', status: 'OK', info: 'x'.repeat(100) }, 50)).toContain('mqtt.max-payload');
  });
});
