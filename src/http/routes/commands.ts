// Route of the commands of one entity (GET /edgeld/v1/commands?entity=…, edge.md §6): the commands
// its device declares, whether the caller may issue them (write the entity), and the latest issued,
// newest first. Whoever may read the entity may read them: the same 404 and 403 as retrieving it.

import { AccessDeniedError, BadRequestDataError, ResourceNotFoundError, formatDateTime, isAbsoluteUri, type Entity, type Principal } from '../../ngsi/index.js';
import { resource, type App, type AppDeps } from '../app-env.js';
import { APP_JSON, negotiate } from '../media.js';
import { int, readParams } from '../params.js';
import { sendJson } from '../respond.js';
import { actorOf } from '../request-context.js';

const COMMANDS = '/edgeld/v1/commands';
const LIMIT_DEFAULT = 20;
const LIMIT_MAX = 100;

/** Whether a write of the entity by the actor would pass its access check (nothing is written). */
function mayWrite(deps: AppDeps, actor: Principal, entity: Entity): boolean {
  try {
    deps.entities.requireRight(actor, entity, 'write');
    return true;
  } catch (err) {
    if (err instanceof AccessDeniedError) return false;
    throw err;
  }
}

export function registerCommandRoutes(app: App, deps: AppDeps): void {
  resource(app, COMMANDS, {
    GET: (c) => {
      const params = readParams(c.req.url, ['entity', 'limit']);
      negotiate(c.req.header('accept'), [APP_JSON]);
      const id = params.get('entity');
      if (id === undefined) throw new BadRequestDataError("Query parameter 'entity' is required", 'The id of the entity whose commands to read');
      if (!isAbsoluteUri(id)) throw new BadRequestDataError('Invalid entity id', `'${id}' is not an absolute URI`);
      const limit = int(params, 'limit', 1, LIMIT_MAX) ?? LIMIT_DEFAULT;
      const actor = actorOf(c);
      const entity = deps.entities.get(actor, id);
      const found = deps.commandLog.ofEntity(actor.tenant, id, limit);
      if (found === undefined) throw new ResourceNotFoundError('No device writes this entity', id);
      return sendJson({
        entityId: id,
        deviceId: found.deviceId,
        commands: found.commands.map((d) => ({ name: d.name, expires: d.expires })),
        writable: mayWrite(deps, actor, entity),
        recent: found.recent.map((r) => ({
          id: r.id, name: r.name, value: r.value, state: r.state, issuedAt: formatDateTime(r.issuedAt), expiresAt: formatDateTime(r.expiresAt),
        })),
      });
    },
  });
}
