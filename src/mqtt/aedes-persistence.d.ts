// Types for the in-memory Aedes persistence class, which aedes-persistence ships without a declaration
// beside its module file; they are the package's own (types/asyncPersistence.d.ts).

declare module 'aedes-persistence/asyncPersistence.js' {
  import MemoryPersistence = require('aedes-persistence/types/asyncPersistence.js');
  export default MemoryPersistence;
}
