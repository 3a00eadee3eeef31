// The commands module's public surface (edge.md §6): the command dispatcher, a reader of the change
// journal that sends commands to devices on `ngsi/<tenant>/<deviceId>/cmd` and records their states.

export {
  createCommandDispatcher, type CommandAnswer, type CommandDispatcher, type CommandDispatcherDeps,
  type CommandStats,
} from './dispatcher.js';
export { ANSWER_DROPS, type AnswerDrop } from './answer-drops.js';
/** The commands of one entity, for readers (GET /edgeld/v1/commands). */
export { createCommandLog, type CommandLog, type EntityCommands, type IssuedCommand } from './command-log.js';
