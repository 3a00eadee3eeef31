// Types for plant-room-net.mjs, for the tests written in TypeScript that need to know whether this
// machine can make the plant-room soak's network.

/** Why this machine cannot make the uplink (not root, a command missing), or undefined. */
export declare function cannotMakeUplink(): string | undefined;
