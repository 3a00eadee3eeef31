// The single error thrown for bad configuration: it lists every problem at once, each by option name.

export interface ConfigIssue {
  /** Dotted option name (`server.port`), or the config file itself for file-level problems. */
  readonly option: string;
  /** Where the value came from: `env SERVER_PORT`, `file /etc/edgeld/config.json`, `argv`. */
  readonly source: string;
  readonly message: string;
}

function formatIssues(issues: readonly ConfigIssue[]): string {
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const lines = issues.map((i) => `  - ${i.option}${i.source ? ` (${i.source})` : ''}: ${i.message}`);
  return [`invalid configuration, ${count}:`, ...lines].join('\n');
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options?: ErrorOptions) {
    super(formatIssues(issues), options);
    this.issues = issues;
  }
}
