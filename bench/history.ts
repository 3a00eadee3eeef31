// The history rollup scenarios (`--only history`, and in a full run): the hourly aggregation over 30
// days from the hour tier against the raw rows with the size of each level (history-tiers.ts), then
// the MQTT ingestion with the rollup job running against the same with rollups off (rollup-cost.ts).

import type { Cleanup } from './cleanup.js';
import { benchHistoryTiers } from './history-tiers.js';
import type { MeasureOptions, Target } from './measure.js';
import type { Row } from './report.js';
import { benchRollupCost } from './rollup-cost.js';

export interface HistoryBenchResult {
  readonly rows: Row[];
  readonly notes: string[];
  readonly hasErrors: boolean;
}

export async function benchHistory(broker: Target, options: MeasureOptions, cleanup: Cleanup, log: (line: string) => void): Promise<HistoryBenchResult> {
  log('[broker] history rollups: a plant built in-process, its hourly aggregations from raw rows and from the hour tier');
  const t = await benchHistoryTiers({ script: broker.script, nodeFlags: broker.nodeFlags, tmp: options.tmp, log }, cleanup);
  log('[broker] history rollups: mqtt ingestion with rollups on and off, on brokers of their own');
  const c = await benchRollupCost(broker, options, cleanup);
  return { rows: [...t.rows, ...c.rows], notes: [...t.notes, ...c.notes], hasErrors: t.hasErrors || c.hasErrors };
}
