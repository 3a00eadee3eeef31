// The metrics of the embedded broker's connection limits (connections open now and those refused
// or closed by a limit) and of its shared subscriptions, read from the broker once it runs (zero before).

import type { MetricsSource } from '../http/index.js';
import { CONNECTION_REFUSALS } from '../mqtt/index.js';
import type { Runtime } from './runtime.js';

export function mqttConnectionMetrics(runtime: Runtime): MetricsSource[] {
  return [
    {
      name: 'edgeld_mqtt_connections', help: 'Connections open to the embedded MQTT broker, those not yet past CONNECT included',
      collect: () => runtime.mqtt?.connectionStats().open ?? 0,
    },
    {
      name: 'edgeld_mqtt_connections_refused_total', type: 'counter', labelNames: ['reason'],
      help: 'Connections to the embedded MQTT broker refused or closed by a limit before their time, by reason',
      collect: () => {
        const refused = runtime.mqtt?.connectionStats().refused;
        return CONNECTION_REFUSALS.map((reason) => ({ labels: { reason }, value: refused?.[reason] ?? 0 }));
      },
    },
    {
      name: 'edgeld_mqtt_shared_groups', help: 'Groups of shared subscriptions ($share/<group>/<filter>) on the embedded MQTT broker',
      collect: () => runtime.mqtt?.sharedStats().groups ?? 0,
    },
    {
      name: 'edgeld_mqtt_shared_members', help: 'Members of the shared subscription groups, persistent sessions away included',
      collect: () => runtime.mqtt?.sharedStats().members ?? 0,
    },
    {
      name: 'edgeld_mqtt_shared_dropped_total', type: 'counter',
      help: 'Messages of shared subscription groups dropped: the group held its limit of waiting messages, or lost its last member',
      collect: () => runtime.mqtt?.sharedStats().dropped ?? 0,
    },
  ];
}
