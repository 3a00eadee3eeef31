// The permissions module's public surface: the permission API's use cases and the subject registry.

export {
  createPermissionService, type CreateOutcome, type PermissionInput, type PermissionPatch, type PermissionQuery, type PermissionService,
  type PermissionServiceDeps,
} from './service.js';
export { createSubjectService, type GroupView, type SubjectService, type SubjectServiceDeps, type UserView } from './subjects.js';
/** The rights of subjects as they are now (subscription owners), kept until a subject changes. */
export { createSubjectRightsCache, type SubjectRights, type SubjectRightsCache, type SubjectRightsDeps } from './subject-rights.js';
