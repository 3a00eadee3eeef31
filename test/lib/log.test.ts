// The logger's two forms: one JSON object per line (journald), and a human line on a terminal.

import { describe, expect, it } from 'vitest';
import { createLogger, resolveLogFormat } from '../../src/lib/index.js';

describe('createLogger', () => {
  it('writes one JSON object per line with time, level, subsystem, message and fields', () => {
    const lines: string[] = [];
    const log = createLogger('info', 'http', (l) => lines.push(l)).child('mqtt');
    log.info('client connected', { clientId: 'c1', n: 2 });
    log.debug('dropped below the level');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ time: expect.any(String), level: 'info', subsystem: 'mqtt', msg: 'client connected', clientId: 'c1', n: 2 });
  });

  it('writes a pretty line: time, level, subsystem, message, then key=value fields', () => {
    const lines: string[] = [];
    const log = createLogger('debug', 'http', (l) => lines.push(l), 'pretty').child('store');
    log.warn('slow write', { ms: 12.5, path: '/a b', tags: ['x'] });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN  store slow write ms=12\.5 path="\/a b" tags=\["x"\]$/);
  });

  it('writes an error field as name and message, and its stack on the lines below (pretty)', () => {
    const lines: string[] = [];
    createLogger('info', 'edgeld', (l) => lines.push(l), 'pretty').error('failed', { err: new TypeError('bad thing') });
    const [first, ...stack] = lines[0]!.split('\n');
    expect(first).toMatch(/ERROR edgeld failed err="TypeError: bad thing"$/);
    expect(stack.length).toBeGreaterThan(0);
    expect(stack[0]).toMatch(/^ {4}at /);
  });
});

describe('resolveLogFormat', () => {
  it('is pretty on a terminal and JSON otherwise for auto; an explicit format wins', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});
