// Configuration: one schema with defaults, loaded from defaults ← config file ← environment.
// Other modules import only the `Config` type; server.ts hands each its slice.

export { defaultConfig, parseRetentionRules, type Config, type RetentionRuleOption } from './schema.js';
export { loadConfig, type LoadConfigInput, type Environment } from './load.js';
export { ConfigError, type ConfigIssue } from './errors.js';
export { CONFIG_OPTIONS, renderOptionsMarkdown, type ConfigOption, type OptionKind, type OptionValue } from './options.js';
