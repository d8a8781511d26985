/** The table printer of both webhook configuration kinds, with kubectl's columns NAME WEBHOOKS AGE. */
import type { TablePrinter } from '../../resource.js';
import { AGE_COLUMN, NAME_COLUMN, age, col } from '../../table/format.js';

export const WEBHOOK_CONFIGURATION_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, col('Webhooks', 'Number of webhooks in the configuration.', 0, 'integer'), AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, Array.isArray(o.webhooks) ? o.webhooks.length : 0, age(o, now)],
};
