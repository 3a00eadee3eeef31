// contexts.allowed-hosts: a comma-separated list of hosts, host:port, IP addresses and CIDR ranges,
// checked when the configuration loads.

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('contexts.allowed-hosts', () => {
  it('takes hosts, host:port, addresses and ranges', () => {
    const value = 'ctx.lan, ctx.lan:8080,127.0.0.1,[::1]:8080,192.168.1.0/24,fd00::/8';
    expect(loadConfig({ argv: [], env: { CONTEXTS_ALLOWED_HOSTS: value } }).contexts.allowedHosts).toBe(value);
  });

  it.each(['10.0.0.0/40', 'http://ctx.lan/', 'ctx.lan:0', 'two words'])('refuses %s at start, naming the option', (value) => {
    expect(() => loadConfig({ argv: [], env: { CONTEXTS_ALLOWED_HOSTS: value } })).toThrow(ConfigError);
    expect(() => loadConfig({ argv: [], env: { CONTEXTS_ALLOWED_HOSTS: value } })).toThrow(/contexts\.allowed-hosts/);
  });
});
