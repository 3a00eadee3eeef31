// The topic classes of the embedded broker: how a topic name is classed, and which notification
// topics a subscriber may name as its subscription's MQTT endpoint.

import { describe, expect, it } from 'vitest';
import { classifyTopic, mayNotifyOn, mayRead, notifyPrefixOf, publishRule, type Party } from '../../src/mqtt/topic-classes.js';

describe('classifyTopic', () => {
  it.each([
    ['ngsi/default/dev1/attrs', { kind: 'measurement', tenant: '', deviceId: 'dev1' }],
    ['ngsi/acme/dev1/attrs/temperature', { kind: 'measurement', tenant: 'acme', deviceId: 'dev1' }],
    ['ngsi/default/dev1/status', { kind: 'status', tenant: '', deviceId: 'dev1' }],
    ['ngsi/default/dev1/cmd', { kind: 'command', tenant: '', deviceId: 'dev1' }],
    ['ngsi/default/dev1/cmdexe', { kind: 'command-answer', tenant: '', deviceId: 'dev1' }],
    ['ngsi/default/dev1/oops', { kind: 'device-other', tenant: '', deviceId: 'dev1' }],
    ['ngsi/default/dev1/constructor', { kind: 'device-other', tenant: '', deviceId: 'dev1' }],
    ['ngsi/oops', { kind: 'ngsi-other' }],
    ['edgeld/notify/alice/alerts', { kind: 'notification', subject: 'alice' }],
    [`${notifyPrefixOf('urn:x/y')}z`, { kind: 'notification', subject: 'urn:x/y' }],
    ['edgeld/notify/%E0%A4%A/x', { kind: 'notification', subject: undefined }],
    ['edgeld/dashboard/abc', { kind: 'dashboard' }],
    ['$SYS/broker/new/clients', { kind: 'system' }],
    ['plant/room1', { kind: 'free' }],
    ['edgeld/ha/default/dev1/open/set', { kind: 'ha-command', tenant: '', deviceId: 'dev1', command: 'open' }],
    ['edgeld/ha/acme/dev1/https%3A%2F%2Fx.org%2Fopen/set', { kind: 'ha-command', tenant: 'acme', deviceId: 'dev1', command: 'https://x.org/open' }],
    ['edgeld/ha/default/dev1/state', { kind: 'ha-state' }],
    ['edgeld/ha/status', { kind: 'ha-state' }],
    ['edgeld/ha/default/dev+1/open/set', { kind: 'ha-state' }],
    ['homeassistant/sensor/edgeld/x/config', { kind: 'free' }],
  ])('%s is %o', (topic, expected) => {
    expect(classifyTopic(topic)).toEqual(expected);
  });
});

describe('Home Assistant topics', () => {
  const admin: Party = { kind: 'subject', subject: 'ha', admin: true };
  const bob: Party = { kind: 'subject', subject: 'bob', admin: false };
  const device: Party = { kind: 'device', tenant: '', deviceId: 'dev1' };
  const command = classifyTopic('edgeld/ha/default/dev1/open/set');
  const state = classifyTopic('edgeld/ha/default/dev1/state');

  it('are read by administrators only', () => {
    for (const c of [command, state]) {
      expect(mayRead(c, admin, undefined)).toBe(true);
      expect(mayRead(c, bob, undefined)).toBe(false);
      expect(mayRead(c, device, undefined)).toBe(false);
    }
  });

  it('take commands from subjects (a write the write core checks), never from devices; states from the broker only', () => {
    expect(publishRule(command, bob, undefined)).toBe('yes');
    expect(publishRule(command, device, undefined)).toBe('no');
    expect(publishRule(state, admin, undefined)).toBe('broker');
  });
});

describe('mayNotifyOn', () => {
  const alice = new Set(['alice']);
  it('lets a subject name its own notification topics and a dashboard topic nobody else notifies on', () => {
    expect(mayNotifyOn('edgeld/notify/alice/x', 'alice', false, undefined)).toBe(true);
    expect(mayNotifyOn('edgeld/dashboard/v1', 'alice', false, undefined)).toBe(true);
    expect(mayNotifyOn('edgeld/dashboard/v1', 'alice', false, alice)).toBe(true);
  });

  it('refuses another subject\'s topics, free topics, devices\' and $SYS to a subject', () => {
    for (const topic of ['edgeld/notify/alice/x', 'plant/room1', 'ngsi/default/dev1/attrs', 'ngsi/default/dev1/cmd', '$SYS/x']) {
      expect(mayNotifyOn(topic, 'bob', false, undefined), topic).toBe(false);
    }
    expect(mayNotifyOn('edgeld/dashboard/v1', 'bob', false, alice)).toBe(false);
  });

  it('lets an administrator name any topic but the devices\' and $SYS', () => {
    for (const topic of ['edgeld/notify/alice/x', 'edgeld/dashboard/v1', 'plant/room1']) expect(mayNotifyOn(topic, 'root', true, alice), topic).toBe(true);
    for (const topic of ['ngsi/default/dev1/attrs', '$SYS/x']) expect(mayNotifyOn(topic, 'root', true, undefined), topic).toBe(false);
  });
});
