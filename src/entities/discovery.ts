// Discovery use cases (NGSI-LD §5.7.5-5.7.9): the entity types and attributes of a tenant's live
// entities, from the store's indexes; names stay expanded IRIs until the edge compacts them.

import { ResourceNotFoundError, type Iri, type Principal } from '../ngsi/index.js';
import { readScopeOf, type AttributeInfo, type Store, type TypeAttributes, type TypeInfo } from '../store/index.js';
import type { IdGenerator } from '../lib/index.js';

/** A list resource with a generated id (EntityTypeList, AttributeList, NGSI-LD §5.2.24, §5.2.27). */
export interface DiscoveryList {
  /** `urn:ngsi-ld:<kind>:<uuid>`. */
  id: string;
  names: Iri[];
}

export interface DiscoveryService {
  /** §5.7.5 Retrieve Available Entity Types. */
  typeList(actor: Principal): DiscoveryList;
  /** §5.7.6 Retrieve Details of Available Entity Types. */
  typeDetails(actor: Principal): TypeAttributes[];
  /** §5.7.7 Retrieve Available Entity Type Information; ResourceNotFound when no live entity has it. */
  typeInfo(actor: Principal, type: Iri): TypeInfo;
  /** §5.7.8 Retrieve Available Attributes. */
  attributeList(actor: Principal): DiscoveryList;
  /** §5.7.9 Retrieve Details of Available Attributes (all of them). */
  attributeDetails(actor: Principal): AttributeInfo[];
  /** §5.7.9 for one attribute; ResourceNotFound when no live entity has it. */
  attributeInfo(actor: Principal, attr: Iri): AttributeInfo;
}

export interface DiscoveryServiceDeps {
  store: Pick<Store, 'discovery'>;
  newId: IdGenerator;
}

export function createDiscoveryService(deps: DiscoveryServiceDeps): DiscoveryService {
  const { store, newId } = deps;
  const discovery = store.discovery;
  return {
    typeList: (actor) => ({ id: `urn:ngsi-ld:EntityTypeList:${newId()}`, names: discovery.types(readScopeOf(actor)) }),
    typeDetails: (actor) => discovery.typesWithAttributes(readScopeOf(actor)),
    typeInfo(actor, type) {
      const info = discovery.typeInfo(readScopeOf(actor), type);
      if (!info) throw new ResourceNotFoundError('Entity type not found', type);
      return info;
    },
    attributeList: (actor) => ({ id: `urn:ngsi-ld:AttributeList:${newId()}`, names: discovery.attributes(readScopeOf(actor)) }),
    attributeDetails: (actor) => discovery.attributeInfos(readScopeOf(actor)),
    attributeInfo(actor, attr) {
      const [info] = discovery.attributeInfos(readScopeOf(actor), attr);
      if (!info) throw new ResourceNotFoundError('Attribute not found', attr);
      return info;
    },
  };
}
