// The temporal domain and its representations (NGSI-LD §4.5.7-4.5.9, §4.5.19): what temporal reads
// hand back, and how a temporal entity is shown.
export * from './model.js';
export {
  isShown, kindOf, renderAggregated, renderNormalized, renderTemporalEntities, renderTemporalEntity, renderTemporalValues,
  type TemporalAnswerContext, type TemporalRenderContext,
} from './render.js';
export { createDateTimeFormatter, formatComputedInstant } from './date-time.js';
