import { z } from './zod.js';
import { isoDateTime, nextCursor, pageQuery, usageFields } from './common.schemas.js';
import { locationInput, MAX_LOCATIONS_PER_REQUEST } from '../../core/ingest/input.schemas.js';

export const locationInputSchema = locationInput.openapi('LocationInput');

export const locationSchema = locationInputSchema
  .extend({ serverTime: z.string().optional().openapi({ description: 'ext: when trackgate received it.' }), protocol: z.string().nullable().optional() })
  .openapi('Location');

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
