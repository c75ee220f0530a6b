import { z } from './zod.js';
import { isoDateTime as coreIsoDateTime } from '../../core/ingest/input.schemas.js';

export const isoDateTime = coreIsoDateTime.openapi({ format: 'date-time', example: '2026-03-01T10:00:00Z' });

export const errorResponseSchema = z
  .object({
    success: z.literal(false),
    error: z.string().openapi({ description: 'A sentence a person can act on.' }),
    code: z
      .string()
      .openapi({ description: 'Stable machine code, e.g. DEVICE_NOT_FOUND, NO_LICENSE_AVAILABLE, INVALID_TOKEN.' }),
    details: z.record(z.string(), z.unknown()).optional(),
    apiUsage: z.number().int().optional().openapi({
      description: 'Requests of this user in the current minute (every authenticated answer, errors included).',
    }),
    apiDailyUsage: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'Requests of this user today, UTC (every authenticated answer, errors included).' }),
  })
  .openapi('Error');

export const usageFields = {
  apiUsage: z.number().int().openapi({ description: 'Requests of this user in the current minute.' }),
  apiDailyUsage: z.number().int().openapi({ description: 'Requests of this user today (UTC).' }),
};

export const okSchema = z.object({ success: z.literal(true), ...usageFields }).openapi('Ok');

export const stringMap = z.record(z.string(), z.string());

export const pageQuery = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .openapi({ description: 'ext: page size (default 1000, at most 10000).' }),
  cursor: z.string().max(200).optional().openapi({ description: 'ext: `nextCursor` of the previous page.' }),
};

export const nextCursor = z
  .string()
  .nullable()
  .openapi({ description: 'ext: pass as `cursor` to read the next page; null when the range is complete.' });
