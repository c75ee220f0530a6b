import { z } from './zod.js';
import { isoDateTime, nextCursor, pageQuery, usageFields } from './common.schemas.js';

const num = z.number().finite().nullable().optional();
const strings = z.array(z.string().max(500)).max(100).optional();

export const locationInputSchema = z
  .object({
    dateTime: isoDateTime.openapi({ description: 'Fix time.' }),
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    speed: z.number().min(0).max(2000).nullable().optional().openapi({ description: 'km/h' }),
    course: z.number().min(0).max(360).nullable().optional().openapi({ description: 'degrees' }),
    battery: z.number().min(0).max(100).nullable().optional().openapi({ description: '%' }),
    fuel: num, fuel2: num, temperature: num, temperature2: num,
    sensorTime1: num, sensorTime2: num, sensorTime3: num, sensorTime4: num,
    inactiveSeconds: num, rpm: num,
    milleage: num.openapi({ description: 'km (the platform spells it so).' }),
    warningTexts: strings, alertTexts: strings, alerts: strings, warnings: strings,
    hasCriticalAlert: z.boolean().nullable().optional(),
    attributes: z.record(z.string(), z.unknown()).optional(),
    accessoriesAttributes: z.array(z.record(z.string(), z.unknown())).max(100).optional(),
    inputs: z.array(z.boolean()).max(64).optional(),
    outputs: z.array(z.boolean()).max(64).optional(),
    altitude: num.openapi({ description: 'ext: metres' }),
    accuracy: num.openapi({ description: 'ext: metres' }),
    satellites: z.number().int().min(0).max(255).nullable().optional(),
    valid: z.boolean().nullable().optional(),
  })
  .openapi('LocationInput');

export const locationSchema = locationInputSchema
  .extend({ serverTime: z.string().optional().openapi({ description: 'ext: when trackgate received it.' }), protocol: z.string().nullable().optional() })
  .openapi('Location');

export const MAX_LOCATIONS_PER_REQUEST = 5000;

export const locationsBodySchema = z
  .object({
    location: locationInputSchema.optional().openapi({ description: 'Store one location.' }),
    locations: z.array(locationInputSchema).min(1).max(MAX_LOCATIONS_PER_REQUEST).optional().openapi({ description: 'Store several locations.' }),
    from: isoDateTime.optional().openapi({ description: 'Return locations with dateTime from this instant (inclusive)…' }),
    to: isoDateTime.optional().openapi({ description: '…to this instant (inclusive), oldest first.' }),
    ...pageQuery,
  })
  .refine((b) => b.location !== undefined || b.locations !== undefined || (b.from !== undefined && b.to !== undefined), {
    message: 'send `location` or `locations` to store, or `from` and `to` to read a range',
  })
  .refine((b) => (b.from === undefined) === (b.to === undefined), { message: '`from` and `to` go together', path: ['to'] })
  .openapi('LocationsRequest');

export const locationsResponse = z.object({ success: z.literal(true), locations: z.array(locationSchema), nextCursor: nextCursor.optional(), ...usageFields });
export const lastLocationResponse = z.object({ success: z.literal(true), lastLocation: locationSchema, ...usageFields });
