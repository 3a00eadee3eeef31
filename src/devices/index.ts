// The devices module's public surface: the device registry (the MQTT devices of each tenant, the
// entity each one writes, how its measurements map to attributes, its secret).

export {
  createDeviceService, type CommandInput, type Device, type DeviceInput, type DeviceMapping, type DevicePatch, type DeviceService, type DeviceServiceDeps,
} from './service.js';
export type { DeviceContext } from '../store/index.js';
/** Whether a string can be a device id (one topic segment that also fits an entity id). */
export { isDeviceId } from './validate.js';
