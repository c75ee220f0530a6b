import { z } from './zod.js';
import { isoDateTime, nextCursor, pageQuery, usageFields } from './common.schemas.js';
import { locationInput, MAX_LOCATIONS_PER_REQUEST } from '../../core/ingest/input.schemas.js';
import { EXPORT_FORMATS, FORMAT_WRITERS } from '../../core/export/export.formats.js';

export const locationInputSchema = locationInput.openapi('LocationInput');

/** The input's fields as answers show them: a field without a value is absent, never null. */
function withoutNulls(shape: Record<string, z.ZodType>): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(shape)) {
    let inner: z.ZodType = field;
    if (inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
    if (inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
    if (inner === field) {
      out[key] = field;
      continue;
    }
    const description = field.description ?? inner.description;
    out[key] = description ? inner.optional().describe(description) : inner.optional();
  }
  return out;
}

export const locationSchema = z
  .object({
    ...withoutNulls(locationInput.shape),
    serverTime: z.string().optional().openapi({ description: 'ext: when trackgate received it.' }),
    protocol: z
      .string()
      .optional()
      .openapi({ description: 'ext: how it came: rest, mqtt, owntracks or the tracker protocol.' }),
    totalDistance: z.number().optional().openapi({
      description:
        "ext, read-only: km the device travelled up to this fix, computed by trackgate (a tracker's own odometer is `milleage`); absent on locations stored before trackgate counted distance.",
    }),
  })
  .openapi('Location', {
    description: 'A stored location. Fields without a value are left out (never null), whatever brought the location.',
  });

export const locationsBodySchema = z
  .object({
    location: locationInputSchema.optional().openapi({ description: 'Store one location.' }),
    locations: z
      .array(locationInputSchema)
      .min(1)
      .max(MAX_LOCATIONS_PER_REQUEST)
      .optional()
      .openapi({ description: 'Store several locations.' }),
    from: isoDateTime
      .optional()
      .openapi({ description: 'Return locations with dateTime from this instant (inclusive)…' }),
    to: isoDateTime.optional().openapi({ description: '…to this instant (inclusive), oldest first.' }),
    ...pageQuery,
  })
  .refine(
    (b) => b.location !== undefined || b.locations !== undefined || (b.from !== undefined && b.to !== undefined),
    {
      message: 'send `location` or `locations` to store, or `from` and `to` to read a range',
    },
  )
  .refine((b) => (b.from === undefined) === (b.to === undefined), {
    message: '`from` and `to` go together',
    path: ['to'],
  })
  .openapi('LocationsRequest');

export const locationsResponse = z.object({
  success: z.literal(true),
  locations: z.array(locationSchema),
  nextCursor: nextCursor.optional(),
  ...usageFields,
});
export const lastLocationResponse = z.object({
  success: z.literal(true),
  lastLocation: locationSchema,
  ...usageFields,
});

export const locationsExportQuery = z.object({
  from: isoDateTime.openapi({ description: 'Locations with dateTime from this instant (inclusive)…' }),
  to: isoDateTime.openapi({ description: '…to this instant (inclusive), oldest first.' }),
  format: z
    .enum(EXPORT_FORMATS)
    .default('csv')
    .openapi({ description: 'The file format (default csv); another value answers 400 VALIDATION_FAILED.' }),
});

/** The export's media types, one per format. */
export const exportMediaTypes = EXPORT_FORMATS.map((f) => FORMAT_WRITERS[f].contentType.split(';')[0]);
