// Discovery use cases (NGSI-LD §5.7.5-5.7.9): the entity types and attributes of a tenant's live
// entities, from the store's indexes; names stay expanded IRIs until the edge compacts them.

import { ResourceNotFoundError, type Iri } from '../ngsi/index.js';
import type { AttributeInfo, Store, TypeAttributes, TypeInfo } from '../store/index.js';
import type { IdGenerator } from '../lib/index.js';
import type { Actor } from './service.js';

/** A list resource with a generated id (EntityTypeList, AttributeList, NGSI-LD §5.2.24, §5.2.27). */
export interface DiscoveryList {
  /** `urn:ngsi-ld:<kind>:<uuid>`. */
  id: string;
  names: Iri[];
}

export interface DiscoveryService {
  /** §5.7.5 Retrieve Available Entity Types. */
  typeList(actor: Actor): DiscoveryList;
  /** §5.7.6 Retrieve Details of Available Entity Types. */
  typeDetails(actor: Actor): TypeAttributes[];
  /** §5.7.7 Retrieve Available Entity Type Information; ResourceNotFound when no live entity has it. */
  typeInfo(actor: Actor, type: Iri): TypeInfo;
  /** §5.7.8 Retrieve Available Attributes. */
  attributeList(actor: Actor): DiscoveryList;
  /** §5.7.9 Retrieve Details of Available Attributes (all of them). */
  attributeDetails(actor: Actor): AttributeInfo[];
  /** §5.7.9 for one attribute; ResourceNotFound when no live entity has it. */
  attributeInfo(actor: Actor, attr: Iri): AttributeInfo;
}

export interface DiscoveryServiceDeps {
  store: Store;
  newId: IdGenerator;
}

export function createDiscoveryService(deps: DiscoveryServiceDeps): DiscoveryService {
  const { store, newId } = deps;
  const discovery = store.discovery;
  return {
    typeList: (actor) => ({ id: `urn:ngsi-ld:EntityTypeList:${newId()}`, names: discovery.types(actor.tenant) }),
    typeDetails: (actor) => discovery.typesWithAttributes(actor.tenant),
    typeInfo(actor, type) {
      const info = discovery.typeInfo(actor.tenant, type);
      if (!info) throw new ResourceNotFoundError('Entity type not found', type);
      return info;
    },
    attributeList: (actor) => ({ id: `urn:ngsi-ld:AttributeList:${newId()}`, names: discovery.attributes(actor.tenant) }),
    attributeDetails: (actor) => discovery.attributeInfos(actor.tenant),
    attributeInfo(actor, attr) {
      const [info] = discovery.attributeInfos(actor.tenant, attr);
      if (!info) throw new ResourceNotFoundError('Attribute not found', attr);
      return info;
    },
  };
}
