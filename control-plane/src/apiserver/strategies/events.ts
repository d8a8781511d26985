/**
 * events.k8s.io/v1 Events: the same storage as core v1 Events (key prefix `events`), converted on
 * every read and write (`eventToEventsV1`/`eventFromEventsV1`), validated strictly as upstream
 * validates writes through this group, and printed with the core Event table.
 */
import { eventFromEventsV1, eventToEventsV1, validateEventsV1Create, validateEventsV1Update } from '@nodelet/api';
import type { ApiObject } from '../object.js';
import type { ResourceDef, Strategy, TablePrinter } from '../resource.js';
import { EVENT_TABLE } from '../table/others.js';

const toCore = (o: ApiObject): ApiObject => eventFromEventsV1(o) as ApiObject;

export const EVENTS_V1_CODEC: NonNullable<ResourceDef['storageCodec']> = {
  fromStored: (o) => eventToEventsV1(o) as ApiObject,
  toStored: toCore,
};

export const eventsV1Strategy: Strategy = {
  validate: (obj, old) => (old ? validateEventsV1Update(toCore(obj), toCore(old)) : validateEventsV1Create(toCore(obj))),
};

export const EVENTS_V1_TABLE: TablePrinter = {
  columns: EVENT_TABLE.columns,
  cells: (o, now) => EVENT_TABLE.cells(toCore(o), now),
};
